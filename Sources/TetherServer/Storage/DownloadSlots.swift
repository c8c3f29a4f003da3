import Synchronization

/// How many state downloads an instance reads at once on PostgreSQL
/// (`[storage] max_state_downloads`).
///
/// A state download holds a PostgreSQL connection of its own for its whole length (one
/// `REPEATABLE READ` snapshot), outside the pool. Without a bound, a bind storm — every device
/// resetting after a restore, a fleet coming back after an outage — opens one connection per
/// device at once, exhausts `max_connections`, and turns most binds into 201 and retries. With
/// it, downloads beyond the limit wait here, first come first served, and start as earlier
/// ones end; a session that ends while it waits leaves the queue.
final class DownloadSlots: Sendable {
    private struct State {
        var free: Int
        var nextTicket: UInt64 = 0
        /// Waiting downloads in arrival order.
        var waiting: [(ticket: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        /// Tickets cancelled before their continuation was stored.
        var cancelled: Set<UInt64> = []
    }

    let limit: Int
    private let state: Mutex<State>

    init(limit: Int) {
        precondition(limit > 0, "a download limit must be positive")
        self.limit = limit
        self.state = Mutex(State(free: limit))
    }

    /// Downloads that hold a slot now.
    var inUse: Int { state.withLock { limit - $0.free } }
    /// Downloads waiting for one.
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Waits for a slot; throws `CancellationError` when the task is cancelled while waiting.
    /// Every successful call is paired with one ``release()``.
    func acquire() async throws {
        try Task.checkCancellation()
        let ticket: UInt64? = state.withLock { state in
            if state.free > 0 && state.waiting.isEmpty {
                state.free -= 1
                return nil
            }
            state.nextTicket += 1
            return state.nextTicket
        }
        guard let ticket else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelledAlready = state.withLock { state in
                    if state.cancelled.remove(ticket) != nil { return true }
                    state.waiting.append((ticket, continuation))
                    return false
                }
                if cancelledAlready { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let continuation: CheckedContinuation<Void, any Error>? = state.withLock { state in
                if let index = state.waiting.firstIndex(where: { $0.ticket == ticket }) {
                    return state.waiting.remove(at: index).continuation
                }
                // Not queued yet (or already given a slot): remember, so it is not queued later.
                state.cancelled.insert(ticket)
                return nil
            }
            continuation?.resume(throwing: CancellationError())
        }
        // Given a slot while its cancellation raced: the ticket was handed over, forget it.
        state.withLock { _ = $0.cancelled.remove(ticket) }
    }

    /// Gives a slot back: to the first waiting download, or to the pool of free slots.
    func release() {
        let next: CheckedContinuation<Void, any Error>? = state.withLock { state in
            if state.waiting.isEmpty {
                precondition(state.free < limit, "a download slot released twice")
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst().continuation
        }
        next?.resume()
    }
}
