import Foundation
import Glibc
import Testing
import TetherClient
import TetherTestSupport

/// `TetherClient` against real processes (issue 36): an application hears another device's
/// writes, a client reset with its before and after, a sync error, and goes on across a restart
/// of its agent without losing or repeating an event; it gets a clear error when the agent is
/// not running.
@Suite(.timeLimit(.minutes(5)))
struct ClientLibraryEndToEndTests {
    @Test func anApplicationHearsWritesResetsAndErrorsAcrossAnAgentRestart() async throws {
        try await withCluster { cluster in
            let agents = try await cluster.syncedAgents(["a", "b"])
            let (a, b) = (agents[0], agents[1])
            let tether = TetherClient(socketPath: b.socket, timeout: .seconds(10))
            let hello = try await tether.hello()
            #expect(hello.role == "operator" && hello.protocolVersion == ControlProtocol.version)
            try await tether.waitSynced(partition: "p", timeout: .seconds(30))

            let heard = Heard()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await event in tether.events(after: hello.lastEventSeq) { await heard.add(event) }
                }
                // Another device's writes.
                try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('w1', 'w', 1), ('w2', 'w', 2)")
                try await a.waitSynced("p")
                try await eventually("changes-applied for a's rows", timeout: .seconds(30)) { await heard.rows("orders") >= 2 }

                // The agent restarts; a writes meanwhile: the stream goes on by itself.
                _ = await b.stop()
                try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('w3', 'w', 3)")
                try await a.waitSynced("p")
                try await b.start()
                try await eventually("changes-applied after the restart", timeout: .seconds(60)) { await heard.rows("orders") >= 3 }

                // A restore behind the store: 211, a reset with the store's copy from before.
                let snapshot = try await cluster.admin(["snapshot", "p"])
                try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('late', 'l', 4)")
                try await a.waitSynced("p")
                try await b.waitSynced("p")
                try await cluster.admin(["restore", "p", snapshot, "--rollback"])
                let reset = try await eventually("b's reset", timeout: .seconds(60)) { await heard.resets().first }
                #expect(reset.code == 211, "\(reset.event)")
                #expect(reset.after == b.store("p") && FileManager.default.fileExists(atPath: reset.before))
                #expect(await heard.events.contains { $0.event == .syncError && $0.code == 211 })

                // Access taken away: 206 reaches the application as a sync error.
                try await cluster.admin(["revoke", "device", "*"])
                try await eventually("the 206", timeout: .seconds(60)) {
                    await heard.events.contains { $0.event == .syncError && $0.code == 206 }
                }
                group.cancelAll()
            }
            let numbers = await heard.events.map(\.seq).filter { $0 > 0 }
            #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count, "no event lost order or came twice")
            #expect(numbers.first == hello.lastEventSeq + 1 && numbers.last! - numbers.first! + 1 == UInt64(numbers.count), "none missed")
        }
    }

    /// The library as another user (a test-only program run through setpriv): a member of the
    /// agent's group reads and is told it may not pause; a user of no group is refused by the
    /// socket itself. Both as `permissionDenied`.
    @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root and setpriv"))
    func aCallerWithoutTheRoleGetsPermissionDenied() async throws {
        try await withCluster { cluster in
            chmod(cluster.dir.path, 0o755)  // the socket's directory must be reachable for other uids
            let a = try await cluster.syncedAgents(["a"])[0]
            let probe = try BuiltProducts.executable("tether-client-probe")
            let reader = try await ChildProcess.run(
                "/usr/bin/setpriv", ["--reuid=49102", "--regid=49102", "--groups=0", probe, a.socket])
            #expect(reader.status == 0 && reader.standardOutput.contains(#"{"pause":"permission-denied","role":"reader"}"#), "\(reader)")
            let stranger = try await ChildProcess.run("/usr/bin/setpriv", ["--reuid=49103", "--regid=49103", "--clear-groups", probe, a.socket])
            #expect(stranger.standardOutput.contains(#"{"pause":"permission-denied","role":"permission-denied"}"#), "\(stranger)")
            #expect(try await a.status("p")?["state"] != "paused", "neither could pause")
        }
    }

    /// The example app of docs/app-integration.md, run as a user would: it writes its store
    /// (the other device gets its orders) and prints the other device's changes as they come.
    @Test func theExampleAppWritesItsStoreAndPrintsWhatItHears() async throws {
        try await withCluster { cluster in
            let agents = try await cluster.syncedAgents(["a", "b"])
            let (a, b) = (agents[0], agents[1])
            let app = try ChildProcess.start(
                try BuiltProducts.executable("tether-example-app"),
                ["--store", b.store("p"), "--partition", "p", "--socket", b.socket, "--interval", "1"])
            defer { app.signal(SIGTERM) }
            #expect(await app.waitForOutput("control protocol \(ControlProtocol.version), role operator", timeout: .seconds(30)), "\(app.standardOutput)")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('from-a', 'a', 1)")
            try await a.waitSynced("p")
            #expect(await app.waitForOutput("other devices' changes: orders 1", timeout: .seconds(30)), "\(app.standardOutput)")
            try await eventually("the app's orders reach the other device", timeout: .seconds(30)) {
                try await a.sql("p", "SELECT count(*) FROM orders WHERE customer = 'walk-in'").trimmingCharacters(in: .whitespacesAndNewlines) != "0"
            }
        }
    }

    @Test func anAgentThatIsNotRunningIsAClearError() async throws {
        let directory = try TemporaryDirectory()
        let tether = TetherClient(socketPath: directory.path + "/tetherd.sock", timeout: .seconds(2))
        await #expect {
            _ = try await tether.status()
        } throws: { error in
            guard case .agentNotRunning = error as? TetherClientError else { return false }
            return (error as? TetherClientError)?.isTransient == true
        }
    }
}

/// What the application heard, in order.
private actor Heard {
    var events: [AgentEvent] = []

    func add(_ event: AgentEvent) { events.append(event) }

    func rows(_ table: String) -> Int64 {
        events.filter { $0.event == .changesApplied }.compactMap { $0.tables?[table] }.reduce(0, +)
    }

    func resets() -> [ClientResetNotice] { events.compactMap(ClientResetNotice.init) }
}
