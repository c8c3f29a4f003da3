/// Runs tasks side by side until one of them has a result: that result, with the others
/// cancelled. A task that returns nil has none and leaves the others running; `otherwise`
/// when none has one (all returned nil, or the caller was cancelled).
enum FirstResult {
    static func of<T: Sendable>(_ tasks: [@Sendable () async -> T?], otherwise: T) async -> T {
        await withTaskGroup(of: T?.self) { group in
            for task in tasks { group.addTask { await task() } }
            var outcome = otherwise
            for await result in group {
                if let result {
                    outcome = result
                    break
                }
            }
            group.cancelAll()
            return outcome
        }
    }
}
