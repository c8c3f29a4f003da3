import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Issue 21 with real processes: every action reaches `[events] error_hook` with its variables,
/// repeats are folded under a refusing server, a hanging hook is killed while sync goes on, and
/// a bad hook path is refused with its key.
@Suite(.timeLimit(.minutes(5)))
struct ErrorHookEndToEndTests {
    /// One run of the recording hook: the variables it saw.
    struct Run: CustomStringConvertible {
        var fields: [String]
        var event: String { fields[0] }
        var partition: String { fields[1] }
        var code: String { fields[2] }
        var name: String { fields[3] }
        var action: String { fields[4] }
        var repeats: Int { Int(fields[5]) ?? -1 }
        var resetID: String { fields[6] }
        var store: String { fields[7] }
        var serverURL: String { fields[8] }
        var description: String { fields.joined(separator: "|") }
    }

    /// Installs a hook in `agent`'s hooks directory that appends one line per run, and the
    /// `[events]` table naming it; returns the file the runs go to.
    static func installRecordingHook(_ agent: ClusterAgent, interval: Int, timeout: Int = 60, body: String = "") throws -> String {
        let log = agent.dir + "/error-runs.log"
        let hook = agent.dir + "/hooks/record-error"
        try Cluster.write(
            """
            #!/bin/sh
            printf '%s|%s|%s|%s|%s|%s|%s|%s|%s\\n' "$TETHER_EVENT" "$TETHER_PARTITION" "$TETHER_ERROR_CODE" "$TETHER_ERROR_NAME" \
                "$TETHER_ERROR_ACTION" "$TETHER_ERROR_REPEATS" "$TETHER_RESET_ID" "$TETHER_STORE" "$TETHER_SERVER_URL" >> \(log)
            \(body)
            """, to: hook, mode: 0o755)
        try agent.reconfigure {
            $0.extra = "[events]\nerror_hook = \"\(hook)\"\nerror_hook_min_interval_seconds = \(interval)\nhook_timeout_seconds = \(timeout)"
        }
        return log
    }

    static func runs(_ log: String) -> [Run] {
        guard let text = try? String(contentsOfFile: log, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map { Run(fields: $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init)) }
            .filter { $0.fields.count == 9 }
    }

    /// restore → `client_reset` with the id of the reset it started; terminate-sync → `retry`.
    @Test func restoreAndTerminateReachTheHook() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let log = try Self.installRecordingHook(a, interval: 0)
            try await a.start()
            try await a.waitSynced("p")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('x', 'xena', 1)")
            try await a.waitSynced("p")
            let snapshot = try await ResetLoopEndToEndTests.snapshot(cluster)
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('y', 'yann', 2)")
            try await a.waitSynced("p")

            try await cluster.admin(["restore", "p", snapshot])
            try await eventually("the hook saw the reset", timeout: .seconds(60)) { Self.runs(log).contains { $0.action == "client_reset" } }
            let reset = try #require(Self.runs(log).first { $0.action == "client_reset" })
            #expect(reset.event == "sync-error" && reset.partition == "p" && reset.store == a.store("p"))
            #expect(["211", "222", "209"].contains(reset.code), "\(reset)")
            #expect(reset.repeats == 0 && reset.serverURL == cluster.url(instance: 0))
            let resetIDs = try await a.resets().compactMap { $0["id"]?.stringValue }
            #expect(resetIDs.contains(reset.resetID), "TETHER_RESET_ID names the reset the error started: \(reset) \(resetIDs)")
            try await a.waitSynced("p", timeout: 60)

            try await cluster.admin(["terminate-sync"])
            try await eventually("the hook saw the termination", timeout: .seconds(60)) { Self.runs(log).contains { $0.action == "retry" } }
            let retry = try #require(Self.runs(log).first { $0.action == "retry" })
            #expect(retry.code == "201" && retry.name == "other_session_error" && retry.resetID.isEmpty && retry.partition == "p")

            // The stream shows the same errors.
            let errors = try await a.events("sync-error")
            #expect(errors.contains { $0["action"] == "client_reset" && $0["reset_id"]?.stringValue == reset.resetID })
            #expect(errors.contains { $0["action"] == "retry" && $0["code"] == 201 })
            try await cluster.admin(["enable-sync"])
            try await a.waitSynced("p", timeout: 60)
        }
    }

    /// A wrong token → `reauth`; revoked access → `delete_store` with its reset; the server
    /// gone → `transient` with no code and no partition.
    @Test func tokenRevokeAndServerDownReachTheHook() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let log = try Self.installRecordingHook(a, interval: 0)
            try await a.start()
            try await a.waitSynced("p")

            try Cluster.write("not-the-token\n", to: a.dir + "/token", mode: 0o600)
            _ = try await a.ctl(["pause", "p"])
            _ = try await a.ctl(["resume", "p"])
            try await eventually("the hook saw the refused token", timeout: .seconds(30)) { Self.runs(log).contains { $0.action == "reauth" } }
            let reauth = try #require(Self.runs(log).first { $0.action == "reauth" })
            #expect(reauth.code == "203" && reauth.partition == "p")
            try Cluster.write(ClusterSettings.defaultToken + "\n", to: a.dir + "/token", mode: 0o600)
            try await a.waitSynced("p", timeout: 60)

            try await cluster.admin(["revoke", "device", "*"])
            try await eventually("the hook saw the revoke", timeout: .seconds(60)) { Self.runs(log).contains { $0.action == "delete_store" } }
            let revoke = try #require(Self.runs(log).first { $0.action == "delete_store" })
            #expect(revoke.code == "206" && !revoke.resetID.isEmpty)

            await cluster.killServer()
            try await eventually("the hook saw the server go", timeout: .seconds(30)) { Self.runs(log).contains { $0.action == "transient" } }
            let gone = try #require(Self.runs(log).first { $0.action == "transient" })
            #expect(gone.partition.isEmpty && gone.code.isEmpty && gone.store.isEmpty)
            #expect(["connection_closed", "connection_refused"].contains(gone.name), "\(gone)")
        }
    }

    /// A server that refuses every connection for half a minute and more: the agent retries with backoff, each
    /// attempt is a sync error, and the hook runs once; the run after the interval stands for
    /// all the others (every error counted once, in a run or in its TETHER_ERROR_REPEATS).
    @Test(.timeLimit(.minutes(3))) func repeatsAreFoldedUnderARefusingServer() async throws {
        try await withCluster { cluster in
            await cluster.killServer()
            let a = try cluster.agent("a", partitions: ["p"])
            let log = try Self.installRecordingHook(a, interval: 60)
            try await a.start()
            // Six attempts take about half a minute of backoff (0.5, 1, 2, 4, 8, 16 s).
            try await eventually("six refused attempts", timeout: .seconds(90)) {
                try await a.events("sync-error").filter { $0["name"] == "connection_refused" }.count >= 6
            }
            #expect(Self.runs(log).count == 1, "one run for them all so far: \(Self.runs(log))")
            #expect(Self.runs(log).first?.repeats == 0)
            try await cluster.startServer()
            try await a.waitSynced("p", timeout: 60)
            let errors = try await a.events("sync-error").filter { $0["name"] == "connection_refused" }.count
            try await eventually("the folded run after the interval", timeout: .seconds(40)) { Self.runs(log).count == 2 }
            let total = Self.runs(log).reduce(0) { $0 + 1 + $1.repeats }
            #expect(total == errors, "every refused attempt counted once: \(Self.runs(log)) for \(errors) errors")
        }
    }

    /// A hook that hangs is killed at its timeout; meanwhile the agent reconnected and synced.
    @Test func aHangingHookIsKilledWhileSyncGoesOn() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            // The hook's timeout leaves room for the restart and the sync below on a loaded
            // machine (15 s was not always enough: the hook timed out before the sync ended).
            let log = try Self.installRecordingHook(a, interval: 0, timeout: 40, body: "exec sleep 600")
            try await a.start()
            try await a.waitSynced("p")
            await cluster.killServer()
            try await eventually("the hook started", timeout: .seconds(30)) { !Self.runs(log).isEmpty }
            try await cluster.startServer()
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('x', 'xena', 1)")
            try await a.waitSynced("p", timeout: 30)
            #expect(try await a.events("hook").isEmpty, "synced while the hook still hangs")
            try await eventually("the hook was killed", timeout: .seconds(70)) {
                try await a.events("hook").contains { $0["outcome"] == "timed-out" && $0["hook"] == "sync-error" }
            }
            #expect(a.log.contains("hook timed out after"))
        }
    }

    /// A missing error hook is refused by --check-config naming the key and line; at reload the
    /// running configuration is kept and the stream says why.
    @Test func aBadHookPathIsRefusedWithItsKey() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            try a.reconfigure { $0.extra = "[events]\nerror_hook = \"\(a.dir)/hooks/missing\"" }
            let check = try await ChildProcess.run(
                try BuiltProducts.executable("tetherd"), ["--config", a.configPath, "--check-config"], timeout: .seconds(30))
            #expect(check.status == 2)
            #expect(check.standardError.contains("events.error_hook"), "\(check.standardError)")
            #expect(check.standardError.contains(":5"), "the line of the key: \(check.standardError)")
            try await a.reload()
            try await eventually("the reload was refused", timeout: .seconds(20)) {
                try await a.events("reload").contains { $0["outcome"] == "refused" && ($0["message"]?.stringValue ?? "").contains("events.error_hook") }
            }
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('x', 'xena', 1)")
            try await a.waitSynced("p")
        }
    }
}
