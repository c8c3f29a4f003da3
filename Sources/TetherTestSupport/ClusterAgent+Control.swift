import Foundation
import TetherControl

/// `tetherctl` against the agent's control socket.
extension ClusterAgent {
    /// Runs `tetherctl --socket <socket> …` (within `timeout`, or the cluster's command timeout).
    @discardableResult
    package func ctl(_ arguments: [String], timeout: Duration? = nil) async throws -> ChildProcess.Result {
        try await ChildProcess.run(
            try BuiltProducts.executable("tetherctl"), ["--socket", socket] + arguments, timeout: timeout ?? timing.command)
    }

    /// A command's `--json` answer; throws when the command fails.
    package func json(_ arguments: [String]) async throws -> JSONValue {
        let result = try await ctl(arguments + ["--json"])
        guard result.status == 0 else { throw TestSupportError("tetherctl \(arguments) failed: \(result)") }
        return try JSONDecoder().decode(JSONValue.self, from: Data(result.standardOutput.utf8))
    }

    /// `tetherctl wait-synced`: every local change uploaded, the server's latest version
    /// integrated, within `timeout` seconds (the cluster's default when nil).
    package func waitSynced(_ partition: String, timeout: Int? = nil) async throws {
        let seconds = timeout ?? timing.waitSynced
        let result = try await ctl(["wait-synced", partition, "--timeout", String(seconds)], timeout: .seconds(seconds + 30))
        guard result.status == 0 else {
            throw TestSupportError("\(name): wait-synced \(partition) failed: \(result)\n\(log.suffix(3000))")
        }
    }

    /// Per-partition status objects.
    package func partitions() async throws -> [JSONValue] {
        try await json(["status"])["partitions"]?.arrayValue ?? []
    }

    /// One partition's status object.
    package func status(_ partition: String) async throws -> JSONValue? {
        try await partitions().first { $0["name"]?.stringValue == partition }
    }

    /// Every reset the agent recorded, oldest first.
    package func resets() async throws -> [JSONValue] {
        try await json(["resets"])["resets"]?.arrayValue ?? []
    }

    /// The events the agent keeps (`tetherctl events --no-follow --json`), oldest first: those
    /// of `kind` (all when nil), of `partition`'s readers when given; throws when the command fails.
    package func events(_ kind: String? = nil, partition: String? = nil) async throws -> [JSONValue] {
        let result = try await ctl(["events", "--no-follow", "--json"] + (partition.map { ["--partition", $0] } ?? []))
        guard result.status == 0 else { throw TestSupportError("tetherctl events failed: \(result)") }
        return jsonLines(result.standardOutput).filter { event in kind.map { event["event"]?.stringValue == $0 } ?? true }
    }
}

/// The JSON documents of `text`, one per line (`--json` streams); lines that are not one are skipped.
package func jsonLines(_ text: String) -> [JSONValue] {
    // Not a JSON document: skipped, as said above.
    text.split(separator: "\n").compactMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }
}
