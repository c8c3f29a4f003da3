import Synchronization

/// How many control clients are being read from or answered at once, each on a thread of its
/// own (``ControlSocketListener``, ``ControlConnection/respond(_:)``). Past the limit a new
/// connection is closed at once with an error line, so a flood of slow clients cannot take
/// more than `limit` threads and `limit` × 64 KiB of request buffers. Clients whose request
/// the handler is working on (a `wait-synced`) hold no slot: they are tasks, not threads.
final class ControlClientBudget: Sendable {
    static let defaultLimit = 64

    let limit: Int
    private let inUse = Mutex(0)

    init(limit: Int = ControlClientBudget.defaultLimit) { self.limit = limit }

    /// Takes a slot for a new client; false when every slot is taken.
    func tryTake() -> Bool {
        inUse.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    /// Takes a slot even past the limit: an answer is always written (its client was let in
    /// earlier); new clients wait until the count is under the limit again.
    func take() { inUse.withLock { $0 += 1 } }

    func release() { inUse.withLock { $0 -= 1 } }

    var count: Int { inUse.withLock { $0 } }
}
