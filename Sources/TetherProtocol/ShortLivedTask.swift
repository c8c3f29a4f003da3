/// Runs work in a child task that ends with it. Swift keeps the stack slabs a task's async
/// frames needed until the task ends, so a task alive as long as a connection or a partition
/// (the server's reader and a session's streamer, the agent's partition loop, its session's
/// event and upload loops) would keep, for its whole life, the deepest stack any bind, upload,
/// state download, store access or reset reached. Run in a child task, those slabs are freed
/// when the work is done (BENCHMARKS.md, "Server memory per connected device", "The idle
/// agent's memory, attributed"). A child task costs a few microseconds: for work done per
/// message, per batch or per commit, not per row.
package enum ShortLivedTask {
    package static func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask(operation: body)
            guard let value = try await group.next() else { throw CancellationError() }
            return value
        }
    }

    package static func run<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
        await withTaskGroup(of: T.self) { group in
            group.addTask(operation: body)
            guard let value = await group.next() else { preconditionFailure("a group with one child task yields its result") }
            return value
        }
    }
}
