import Foundation
import Testing
import TetherProtocol
import TetherControl
import TetherTestSupport

/// Issue 16: every `tetherctl` command answers — with its result or a one-line reason — in
/// every partition state an operator can meet: a reset pinned in the middle (`resetting`), a
/// reset waiting for an operator (`reset-pending`, access denied), a store that cannot be
/// opened, and the server gone (`offline`/`connecting`).
@Suite(.serialized, .timeLimit(.minutes(5)))
struct OperatorCommandsEndToEndTests {
    /// Runs every command against `partition` and checks each one ends by itself, promptly,
    /// with an answer. Pause is undone by resume.
    static func everyCommandAnswers(_ agent: ClusterAgent, _ partition: String, in situation: String) async throws {
        let commands: [[String]] = [
            ["status"], ["status", "--json"], ["resets"], ["resets", "--json"], ["pause", partition], ["resume", partition],
            ["wait-synced", partition, "--timeout", "1"], ["reset", "initiate", partition], ["log-level", "info"],
        ]
        for command in commands {
            let started = ContinuousClock.now
            let result = try await ChildProcess.run(
                try BuiltProducts.executable("tetherctl"), ["--socket", agent.socket] + command, timeout: .seconds(15))
            let took = ContinuousClock.now - started
            #expect(!result.timedOut && !result.signalled, "\(situation): tetherctl \(command.joined(separator: " ")) did not answer: \(result)")
            #expect(took < .seconds(10), "\(situation): tetherctl \(command.joined(separator: " ")) took \(took)")
            #expect([0, 1].contains(result.status), "\(situation): tetherctl \(command.joined(separator: " ")): \(result)")
            if result.status != 0 {
                let reason = (result.standardError + result.standardOutput).trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(!reason.isEmpty, "\(situation): tetherctl \(command.joined(separator: " ")) failed without a reason")
            }
        }
    }

    @Test func everyCommandAnswersInEveryState() async throws {
        try await withCluster { cluster in
            let gates = cluster.dir.appending("gates")
            try FileManager.default.createDirectory(atPath: gates, withIntermediateDirectories: true)
            let a = try cluster.agent("a", partitions: ["p", "q"])
            // A third partition whose store path is a directory: it cannot be opened (retried).
            try FileManager.default.createDirectory(atPath: a.dir + "/not-a-store", withIntermediateDirectories: true)
            try Cluster.write(
                ClusterAgent.config(dir: a.dir, url: cluster.url, partitions: ["p", "q"], extra: "")
                    + "\n[[partition]]\nname = \"s\"\nstore = \"\(a.dir)/not-a-store\"\n", to: a.configPath)
            try await a.start(environment: ["TETHER_FAULT_RESET_GATE": gates])
            try await a.waitSynced("p")
            try await a.waitSynced("q")
            try await eventually("s cannot open its store", timeout: .seconds(30)) {
                a.log.contains("cannot open the store \(a.dir)/not-a-store")
            }
            try await Self.everyCommandAnswers(a, "s", in: "store cannot be opened")

            // p: a reset pinned before its download (resetting).
            #expect(FileManager.default.createFile(atPath: gates + "/fetching", contents: nil))
            let snapshot = try await cluster.admin(["snapshot", "p"])
            let id = snapshot.split(separator: " ").first { $0.count == 16 && $0.allSatisfy(\.isHexDigit) }.map(String.init) ?? snapshot
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('x', 'xena', 1)")
            try await a.waitSynced("p")
            try await cluster.admin(["restore", "p", id, "--rollback"])
            try await eventually("p resetting", timeout: .seconds(60)) { FileManager.default.fileExists(atPath: gates + "/fetching.reached") }
            #expect(try await a.status("p")?["state"] == "resetting")
            try await Self.everyCommandAnswers(a, "p", in: "resetting")
            try FileManager.default.removeItem(atPath: gates + "/fetching")
            try await a.waitSynced("p", timeout: 60)

            // q: access denied, a delete-store action waiting (reset-pending).
            try await cluster.admin(["grant", "device", "p", "readwrite"])
            try await cluster.admin(["revoke", "device", "*"])
            try await eventually("q pending", timeout: .seconds(60)) { try await a.status("q")?["state"] == "reset-pending" }
            try await Self.everyCommandAnswers(a, "q", in: "reset-pending (access denied)")
            try await Self.everyCommandAnswers(a, "q", in: "access denied after the delete-store")

            // The server gone.
            await cluster.killServer()
            try await eventually("p offline", timeout: .seconds(30)) { try await a.status("p")?["state"] == "offline" }
            try await Self.everyCommandAnswers(a, "p", in: "server gone")
            try await Self.everyCommandAnswers(a, "q", in: "server gone, access denied")
        }
    }

    /// Without a running session the status still counts what the store holds unsynced: a
    /// paused partition, one paused since the daemon started (its store not opened yet), and an
    /// offline one (server gone), each after an application's commit.
    @Test func theUnsyncedCountIsRightWithoutASession() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            let unsynced = { () async throws -> Double? in try await a.status("p")?["unsynced_changes"]?.numberValue }
            #expect(try await a.ctl(["pause", "p"]).status == 0)
            _ = try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('o1', 'c', 1.0)")
            #expect(try await a.status("p")?["state"]?.stringValue == "paused")
            #expect(try await unsynced() == 1, "paused")
            // Paused since the start: the store is read from its file.
            await a.stop()
            try await a.start()
            _ = try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('o2', 'c', 2.0)")
            #expect(try await a.status("p")?["state"]?.stringValue == "paused")
            #expect(try await unsynced() == 2, "paused since the start")
            // Offline: the server is gone.
            #expect(try await a.ctl(["resume", "p"]).status == 0)
            try await a.waitSynced("p")
            await cluster.stopServer()
            _ = try await eventually("p offline", timeout: .seconds(30)) { () -> Bool? in
                try await a.status("p")?["state"]?.stringValue == "offline" ? true : nil
            }
            _ = try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('o3', 'c', 3.0)")
            #expect(try await unsynced() == 1, "offline")
        }
    }

    /// `tetherctl status` says which release runs, the protocols it speaks, the device's name
    /// and id in the server's ledger, and the server's software once connected.
    @Test func statusNamesTheReleaseTheProtocolsAndTheServer() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"], extra: "[device]\nname = \"till-a\"")
            try await a.start()
            try await a.waitSynced("p")
            let text = try await a.ctl(["status"]).standardOutput
            #expect(text.hasPrefix("tetherd \(TetherVersion.release) (sync protocol \(TetherVersion.syncProtocol), control protocol "), "\(text)")
            #expect(text.contains("device till-a ("))
            #expect(text.contains(", tether-server \(TetherVersion.release) speaking sync protocol \(TetherVersion.syncProtocol)"), "\(text)")
            let json = try await a.json(["status"])
            #expect(json["agent"]?["release"]?.stringValue == TetherVersion.release)
            #expect(json["agent"]?["sync_protocol"]?.numberValue == Double(TetherVersion.syncProtocol))
            #expect(json["agent"]?["device_id"]?.stringValue?.count == 32)
            #expect(json["connection"]?["server_software"]?.stringValue == "tether-server \(TetherVersion.release)")
            let admin = try await cluster.admin(["status"])
            #expect(admin.hasPrefix("tether-server \(TetherVersion.release), sync protocol \(TetherVersion.syncProtocol)"))
        }
    }

    /// Shell completion (the `---completion` requests the generated bash, zsh and fish
    /// scripts make): partition names from the running agent, or from its configuration file
    /// while it is stopped; log levels for `log-level`.
    @Test func completionOffersPartitionsAndLogLevels() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["store-17", "catalog"])
            let tetherctl = try BuiltProducts.executable("tetherctl")
            func complete(_ path: [String], _ argument: String, _ words: [String]) async throws -> [String] {
                let line = ["tetherctl", "--config", a.configPath] + words
                let result = try await ChildProcess.run(
                    tetherctl, ["---completion"] + path + ["--", argument, String(line.count - 1), String(line.last?.count ?? 0)] + line)
                #expect(result.status == 0, "\(result)")
                return result.standardOutput.split(separator: "\n").map(String.init)
            }
            // Stopped: the configuration file says.
            #expect(try await complete(["pause"], "positional@0", ["pause", ""]) == ["catalog", "store-17"])
            try await a.start()
            #expect(try await complete(["wait-synced"], "positional@0", ["wait-synced", "st"]) == ["store-17"])
            #expect(try await complete(["events"], "--partition", ["events", "--partition", "ca"]) == ["catalog"])
            let levels = try await ChildProcess.run(tetherctl, ["--generate-completion-script", "bash"]).standardOutput
            #expect(levels.contains("'fatal'$'\\n''error'$'\\n''warn'$'\\n''info'$'\\n''detail'$'\\n''debug'$'\\n''trace'"))
        }
    }
}
