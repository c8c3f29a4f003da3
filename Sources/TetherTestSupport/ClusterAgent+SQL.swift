/// The agent's stores, as an application sees them: files written with the `sqlite3` CLI.
extension ClusterAgent {
    /// The store file of `partition`.
    package func store(_ partition: String) -> String { "\(dir)/state/stores/\(partition).sqlite" }

    /// Runs SQL with the `sqlite3` CLI, as an application would; returns its output.
    @discardableResult
    package func sql(_ partition: String, _ statement: String) async throws -> String {
        let result = try await ChildProcess.run(
            "/usr/bin/sqlite3", ["-cmd", ".timeout 10000", store(partition), statement], timeout: timing.command)
        guard result.status == 0 else { throw TestSupportError("sqlite3 on \(name)/\(partition) failed: \(result)") }
        return result.standardOutput
    }

    /// The `orders` table of ``Cluster/schema``, one `id|customer|total|note` line a row
    /// (`-` for a null note), by id.
    package func rows(_ partition: String) async throws -> String {
        try await sql(partition, "SELECT id, customer, total, coalesce(note, '-') FROM orders ORDER BY id")
    }
}
