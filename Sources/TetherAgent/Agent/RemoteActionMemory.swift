import TetherProtocol

/// The remote actions answered in this run of the agent, by the server's id (the last
/// ``capacity``): the server sends an action again on a new connection until it is answered,
/// and one that ran while its answer was lost is answered again without running twice.
struct RemoteActionMemory: Sendable, Hashable {
    static let capacity = 256

    private var results: [Int64: RemoteActionResult] = [:]
    /// The ids, oldest first.
    private var order: [Int64] = []
    private let capacity: Int

    init(capacity: Int = Self.capacity) {
        self.capacity = max(1, capacity)
    }

    /// The answer given to action `id`, if it is remembered.
    func result(for id: Int64) -> RemoteActionResult? { results[id] }

    var count: Int { order.count }

    /// Remembers `result` (the oldest answer is forgotten past ``capacity``).
    mutating func remember(_ result: RemoteActionResult) {
        if results.updateValue(result, forKey: result.id) == nil {
            order.append(result.id)
        }
        while order.count > capacity {
            results[order.removeFirst()] = nil
        }
    }
}
