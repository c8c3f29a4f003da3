import Synchronization
import TetherSyncClient

/// What the fan-out sessions saw: which are ready, and when each received each round's write.
final class DeliveryRecorder: Sendable {
    private struct State {
        var ready = Set<Int>()
        var failures: [String] = []
        var round = -1
        var roundStart: ContinuousClock.Instant?
        var deliveredAt: [Int: ContinuousClock.Instant] = [:]
        var samples: [Double] = []
        var missed = 0
    }

    private let state = Mutex(State())
    private let connections = Mutex<[SyncConnection]>([])

    func opened(_ connection: SyncConnection) { connections.withLock { $0.append(connection) } }

    /// Closes every session's connection: their event streams end with `disconnected`.
    func closeAll() async {
        for connection in connections.withLock({ $0 }) { await connection.close() }
    }

    func ready(_ session: Int) { state.withLock { _ = $0.ready.insert(session) } }
    func failed(_ session: Int, _ why: String) { state.withLock { $0.failures.append("session \(session): \(why)") } }
    var readyCount: Int { state.withLock { $0.ready.count } }
    var failures: [String] { state.withLock { $0.failures } }

    /// A new round: deliveries from now on belong to it (the write is about to commit).
    func expect(round: Int) {
        state.withLock {
            $0.round = round
            $0.roundStart = nil
            $0.deliveredAt = [:]
        }
    }

    /// The round's write committed at `instant`.
    func committed(at instant: ContinuousClock.Instant) { state.withLock { $0.roundStart = instant } }

    /// A session received a download; only its first one of the round counts.
    func delivered(_ session: Int, at instant: ContinuousClock.Instant) {
        state.withLock {
            guard $0.round >= 0, $0.deliveredAt[session] == nil else { return }
            $0.deliveredAt[session] = instant
        }
    }

    var deliveredCount: Int { state.withLock { $0.deliveredAt.count } }

    /// Closes the round: each delivery's delay after the commit, in milliseconds.
    func finishRound(sessions: Int) {
        state.withLock { state in
            guard let start = state.roundStart else { return }
            for instant in state.deliveredAt.values { state.samples.append(start.duration(to: instant).seconds * 1000) }
            state.missed += sessions - state.deliveredAt.count
        }
    }

    var samples: [Double] { state.withLock { $0.samples } }
    var missed: Int { state.withLock { $0.missed } }
}
