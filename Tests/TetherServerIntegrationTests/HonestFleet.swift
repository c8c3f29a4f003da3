import Foundation
import Synchronization
import TetherProtocol
import TetherSyncClient

/// Honest devices syncing while a flood goes on (``HostileFloodTests``): light in-process clients
/// (`SyncConnection` and ``TestDevice``, not `tetherd` processes), each from one of
/// ``sourceAddresses`` (other peers than the attackers'), spread over ``partitions`` partitions.
/// The first ``lateFrom`` devices bind before the flood starts (they must stay bound through it);
/// the others bind once it is up (they must get through it). Each uploads a row when it binds
/// and receives the rows of the other devices of its partition bound so far; then, still on the
/// same session, ``secondRoundAfter`` the flood is up, it uploads another and receives every
/// other device's. A device that cannot bind tries again a second later, as the agent would,
/// until the deadline (counted: a device refused before it bound is a finding too); a device
/// that lost its session once bound has failed (it did not stay bound).
struct HonestFleet: Sendable {
    var url: String
    var sourceAddresses: [String]
    var devices = 200
    var partitions = 20
    var lateFrom = 100
    var secondRoundAfter: Duration = .seconds(25)

    struct Outcome: Sendable {
        var bound: Set<Int> = []
        var syncedFirst: Set<Int> = []
        var synced: Set<Int> = []
        /// Connection attempts that failed before their bind (each tried again).
        var retries = 0
        /// Devices bound at their first attempt.
        var boundAtOnce = 0
        /// Per device: why it failed (lost its session once bound, or never got through).
        var failures: [Int: String] = [:]
        /// Why attempts failed before their bind: a few different reasons.
        var refusals: Set<String> = []

        var lostAfterBinding: [Int: String] { failures.filter { $0.value.hasPrefix("lost") } }
    }

    /// Runs every device until it synced both rounds or `deadline` passed (or the task is cancelled).
    func run(progress: FleetProgress, deadline: ContinuousClock.Instant) async {
        await withDiscardingTaskGroup { group in
            for index in 0..<devices {
                group.addTask { await device(index, progress: progress, deadline: deadline) }
            }
        }
    }

    private func device(_ index: Int, progress: FleetProgress, deadline: ContinuousClock.Instant) async {
        let partition = String(format: "catalog-%02d", index % partitions)
        let late = index >= lateFrom
        let peers = Array(stride(from: index % partitions, to: devices, by: partitions))
        let firstPeers = late ? peers : peers.filter { $0 < lateFrom }
        let configuration = SyncClientConfiguration(
            url: url, software: "tether-flood-witness", sourceAddress: sourceAddresses[index % sourceAddresses.count])
        let clock = ContinuousClock()
        if late {
            guard await progress.waitForFlood(after: .zero, deadline: deadline) else {
                progress.fail(index, "never bound: the flood never came up")
                return
            }
        }
        for attempt in 1...200 where clock.now < deadline && !Task.isCancelled {
            do {
                try await withDeadline(clock.now.duration(to: deadline)) {
                    try await SyncConnection.run(configuration, logger: testLogger) { connection in
                        let device = TestDevice(partition: partition, user: "pos-17")
                        try await device.bind(on: connection)
                        progress.update {
                            $0.bound.insert(index)
                            if attempt == 1 { $0.boundAtOnce += 1 }
                        }
                        try await device.writeAndSync(row: "r1-\(index)", expecting: firstPeers.map { "r1-\($0)" })
                        progress.update { _ = $0.syncedFirst.insert(index) }
                        guard await progress.waitForFlood(after: secondRoundAfter, deadline: deadline) else { throw ServerFailure("no second round") }
                        try await device.writeAndSync(row: "r2-\(index)", expecting: peers.map { "r2-\($0)" })
                        progress.update { _ = $0.synced.insert(index) }
                    }
                }
                return
            } catch {
                let bound = progress.outcome.bound.contains(index)
                progress.update {
                    if bound {
                        $0.failures[index] = "lost its session once bound: \(error)"
                    } else {
                        $0.retries += 1
                        if $0.refusals.count < 5 { $0.refusals.insert("\(error)".prefix(200).description) }
                    }
                }
                if bound { return }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        if !progress.outcome.bound.contains(index) { progress.fail(index, "never bound before the deadline") }
    }
}

/// The fleet's outcome, written by every device's task, and when the flood came up (set by the test).
final class FleetProgress: Sendable {
    private let state = Mutex<(outcome: HonestFleet.Outcome, floodUp: ContinuousClock.Instant?)>((HonestFleet.Outcome(), nil))
    var outcome: HonestFleet.Outcome { state.withLock { $0.outcome } }
    func update(_ change: (inout HonestFleet.Outcome) -> Void) { state.withLock { change(&$0.outcome) } }
    func fail(_ device: Int, _ why: String) { update { $0.failures[device] = why } }

    /// The flood is up: late devices bind, the second round is timed from now.
    func floodIsUp() { state.withLock { $0.floodUp = .now } }

    /// Waits until the flood has been up for `after`; false at the deadline or when cancelled.
    func waitForFlood(after: Duration, deadline: ContinuousClock.Instant) async -> Bool {
        while ContinuousClock.now < deadline && !Task.isCancelled {
            if let up = state.withLock({ $0.floodUp }), ContinuousClock.now >= up.advanced(by: after) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}

extension TestDevice {
    /// Writes `row`, uploads it, and handles the session's events until the upload is
    /// acknowledged and every row of `rows` arrived.
    func writeAndSync(row: String, expecting rows: [String]) async throws {
        write(.insert("orders", .text(row), ["customer": .text("witness"), "total": .real(1), "note": .null]))
        try await upload()
        while !state.pending.isEmpty || !rows.allSatisfy({ state.rows[RowRef(table: "orders", key: .text($0))] != nil }) {
            try await handle(nextEvent())
        }
    }
}
