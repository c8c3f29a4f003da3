/// A clock that moves only when a test calls ``advance(by:)``, to drive time-based services
/// (the watchdog's ping period) deterministically. Tests await ``waitForSleepers(_:timeout:)``
/// to know the code under test is parked in `sleep` before advancing.
package final class ManualClock: Clock, Sendable {
    package struct Instant: InstantProtocol, CustomStringConvertible {
        /// Time since the clock was made.
        package var offset: Duration

        package init(offset: Duration) { self.offset = offset }

        package func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        package func duration(to other: Instant) -> Duration { other.offset - offset }
        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        package var description: String { "\(offset)" }
    }

    private struct Sleeper: Sendable {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State: Sendable {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: Sleeper] = [:]
        var cancelledEarly: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = AwaitableState(State())

    package init() {}

    package var now: Instant { state.read { $0.now } }
    package var minimumResolution: Duration { .zero }

    /// How many tasks are sleeping on this clock right now.
    package var sleeperCount: Int { state.read { $0.sleepers.count } }

    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.update { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.update { state -> Result<Void, any Error>? in
                    if state.cancelledEarly.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.update { state -> Sleeper? in
                if let sleeper = state.sleepers.removeValue(forKey: id) { return sleeper }
                state.cancelledEarly.insert(id)
                return nil
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        state.update { _ = $0.cancelledEarly.remove(id) }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come.
    package func advance(by duration: Duration) {
        let due = state.update { state -> [CheckedContinuation<Void, any Error>] in
            state.now = state.now.advanced(by: duration)
            let ready = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in ready.keys { state.sleepers[id] = nil }
            return ready.values.sorted { $0.deadline < $1.deadline }.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    /// Waits until at least `count` tasks sleep on the clock; `false` when `timeout` passes first.
    @discardableResult
    package func waitForSleepers(_ count: Int = 1, timeout: Duration = TestDeadline.standard) async -> Bool {
        await state.wait(timeout: timeout) { $0.sleepers.count >= count }
    }
}
