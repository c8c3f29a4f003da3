import Foundation

/// How many clusters (a server or two and their agents) the tests of one process run at once:
/// ``withCluster(_:_:)`` waits for a slot. Swift Testing starts every test of a phase at once,
/// and the end-to-end phase's 148 tests on 2 cores ran at a load of 20–25, where deadlines
/// that hold on a busy machine (a `wait-synced` of 30 s, a pytest run of 300 s) were missed in
/// about half of the runs. `TETHER_TEST_MAX_CLUSTERS=N` sets the number; the default is six
/// per core, at least 8.
package actor ClusterSlots {
    package static let shared = ClusterSlots(limit: ClusterSlots.configuredLimit)

    static var configuredLimit: Int {
        if let text = ProcessInfo.processInfo.environment["TETHER_TEST_MAX_CLUSTERS"], let value = Int(text), value > 0 { return value }
        return max(8, 6 * ProcessInfo.processInfo.activeProcessorCount)
    }

    let limit: Int
    private var taken = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    package init(limit: Int) {
        self.limit = limit
    }

    /// Waits for a slot (first come, first served).
    package func take() async {
        if taken < limit {
            taken += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Gives the slot to the next waiting cluster, or back.
    package func give() {
        if waiting.isEmpty {
            taken -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
