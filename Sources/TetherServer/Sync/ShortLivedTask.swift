/// Runs work in a child task that ends with it. Swift keeps the stack slabs a task's async
/// frames needed until the task ends, so a task alive as long as its connection (the reader,
/// a session's streamer) would keep, for the connection's lifetime, the deepest stack any bind,
/// upload, state download or history read reached through the storage and the WebSocket
/// writer. Run in a child task, those slabs are freed when the work is done
/// (BENCHMARKS.md, "Server memory per connected device").
enum ShortLivedTask {
    static func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask(operation: body)
            guard let value = try await group.next() else { throw CancellationError() }
            return value
        }
    }
}
