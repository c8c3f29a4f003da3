import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Security checks (issue 9): tokens never leave the token file (journal, stderr, `tetherctl`
/// output, hook environment); hooks get exactly the documented environment; nothing the agent
/// writes is open to other users; the real daemon's control socket refuses other users.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct SecurityEndToEndTests {
    /// docs/contract.md "Reset hooks": the only variables a hook gets, besides PATH.
    static let hookVariables: Set<String> = [
        "PATH", "TETHER_EVENT", "TETHER_RESET_ID", "TETHER_PARTITION", "TETHER_STORE", "TETHER_BACKUP", "TETHER_RESET_MODE",
        "TETHER_RESET_OUTCOME", "TETHER_ERROR_CODE", "TETHER_ERROR_MESSAGE", "TETHER_RESET_CAUSE", "TETHER_SERVER_URL",
        "TETHER_HEALED_CHANGES",
    ]

    /// Hooks that save the environment they were executed with, exactly as execve() passed it
    /// (`/proc/$$/environ`, before the shell adds variables of its own), and print a line.
    static func installEnvironmentHooks(_ agent: ClusterAgent) throws -> String {
        for event in ["before-reset", "after-reset", "manual-reset"] {
            try Cluster.write(
                "#!/bin/sh\ntr '\\0' '\\n' < /proc/$$/environ > \(agent.dir)/\(event).environ\necho \"\(event) hook ran\"\n",
                to: agent.dir + "/hooks/" + event, mode: 0o755)
        }
        return """
            [reset]
            before_hook = "\(agent.dir)/hooks/before-reset"
            after_hook = "\(agent.dir)/hooks/after-reset"
            manual_hook = "\(agent.dir)/hooks/manual-reset"
            """
    }

    static func hookEnvironment(_ agent: ClusterAgent, _ event: String) -> [String: String]? {
        guard let text = try? String(contentsOfFile: "\(agent.dir)/\(event).environ", encoding: .utf8) else { return nil }
        return Dictionary(text.split(separator: "\n").compactMap { line in
            line.firstIndex(of: "=").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) }
        }, uniquingKeysWith: { $1 })
    }

    /// Every `tetherctl` command an operator reads, as text and as JSON.
    static func tetherctlOutputs(_ agent: ClusterAgent) async throws -> [String] {
        var outputs: [String] = []
        for command in [["status"], ["resets"], ["status", "--json"], ["resets", "--json"], ["resets", "--partition", "p", "--json"]] {
            let result = try await agent.ctl(command)
            #expect(result.status == 0, "\(command): \(result)")
            outputs.append(result.standardOutput + result.standardError)
        }
        return outputs
    }

    /// A distinctive token through a sync, a 203 (with a second distinctive, wrong token) and a
    /// client reset with hooks; one agent logging to journald, one to stderr. Neither token is in
    /// the journal, stderr, any `tetherctl` output or any hook's environment, and each hook got
    /// exactly the docs/contract.md "Reset hooks" variables plus PATH.
    @Test(.enabled(if: Journald.isAvailable, "needs root to run systemd-journald"))
    func tokensNeverLeakAndHooksGetOnlyTheDocumentedEnvironment() async throws {
        try await Journald.ensureRunning()
        let token = "tok-\(UInt64.random(in: 1...UInt64.max))-secret"
        let wrongToken = "wrong-\(UInt64.random(in: 1...UInt64.max))-secret"
        try await withCluster(ClusterSettings(token: token)) { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"])
            for agent in [a, b] {
                try Cluster.write(
                    ClusterAgent.config(dir: agent.dir, url: cluster.url, partitions: ["p"], extra: try Self.installEnvironmentHooks(agent)),
                    to: agent.configPath)
            }
            try await a.start(logDestination: "journal")
            try await b.start(logDestination: "stderr")
            let pid = try #require(a.processID)
            for agent in [a, b] { try await agent.waitSynced("p") }
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r1', 'one', 1)")
            for agent in [a, b] { try await agent.waitSynced("p") }
            // 203: a wrong token, then the right one again.
            for agent in [a, b] { try Cluster.write(wrongToken + "\n", to: agent.dir + "/token", mode: 0o600) }
            for agent in [a, b] {
                // A new bind reads the token file again.
                #expect(try await agent.ctl(["pause", "p"]).status == 0)
                #expect(try await agent.ctl(["resume", "p"]).status == 0)
            }
            for agent in [a, b] {
                try await eventually("203 on \(agent.name)", timeout: .seconds(60)) {
                    try await agent.status("p")?["last_error"]?["code"] == 203
                }
            }
            for agent in [a, b] { try Cluster.write(token + "\n", to: agent.dir + "/token", mode: 0o600) }
            for agent in [a, b] { try await agent.waitSynced("p", timeout: 90) }
            // A client reset with hooks (208: sync terminated and enabled again).
            try await cluster.admin(["terminate-sync"])
            try await cluster.admin(["enable-sync"])
            for agent in [a, b] {
                try await eventually("reset done on \(agent.name)", timeout: .seconds(90)) {
                    try await agent.json(["resets"])["resets"]?.arrayValue?.last?["phase"] == "done"
                }
                try await agent.waitSynced("p", timeout: 90)
            }
            var haystacks = try await Self.tetherctlOutputs(a) + (try await Self.tetherctlOutputs(b))
            haystacks.append(b.log)
            let journal = try await eventually("a's records in the journal", timeout: .seconds(30)) { () -> [JournalRecord]? in
                let found = try await Journald.records(matching: ["_PID=\(pid)"])
                return found.contains { $0["MESSAGE"]?.contains("after-reset hook ran") == true } ? found : nil
            }
            #expect(journal.contains { $0["TETHER_HOOK"] == "after-reset" }, "hook output reaches the journal with its hook")
            haystacks += journal.map(\.description)
            for event in ["before-reset", "after-reset"] {
                for agent in [a, b] {
                    let environment = try #require(Self.hookEnvironment(agent, event), "\(event) ran on \(agent.name)")
                    haystacks.append(environment.map { "\($0.key)=\($0.value)" }.joined(separator: "\n"))
                    #expect(Set(environment.keys).isSubset(of: Self.hookVariables), "\(event): \(environment.keys.sorted())")
                    let required = Self.hookVariables.subtracting(
                        event == "before-reset" ? ["TETHER_RESET_OUTCOME", "TETHER_HEALED_CHANGES"] : [])
                    #expect(required.isSubset(of: Set(environment.keys)), "\(event) lacks \(required.subtracting(environment.keys).sorted())")
                    #expect(environment["TETHER_EVENT"] == event)
                }
            }
            #expect(haystacks.count > 10)
            for (index, text) in haystacks.enumerated() {
                #expect(!text.contains(token), "the token leaked into output \(index)")
                #expect(!text.contains(wrongToken), "the wrong token leaked into output \(index)")
            }
        }
    }

    /// State dir, state database, stores, recovery dir, backups and quarantined stores: no
    /// access for others (the daemon sets its umask; stores are 0660 for the application group).
    @Test func nothingTheAgentWritesIsOpenToOtherUsers() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r1', 'one', 1)")
            try await a.waitSynced("p")
            try await cluster.admin(["terminate-sync"])
            try await cluster.admin(["enable-sync"])
            try await eventually("reset done", timeout: .seconds(90)) {
                try await a.json(["resets"])["resets"]?.arrayValue?.last?["phase"] == "done"
            }
            await a.stop()
            try DamagedStoreEndToEndTests.Damage.notSQLite.apply(to: a.store("p"))
            try await a.start()
            try await a.waitSynced("p", timeout: 90)
            let resets = try #require(try await a.json(["resets"])["resets"]?.arrayValue)
            #expect(resets.count >= 2 && resets.last?["quarantined"] == true, "\(resets)")
            let state = a.dir + "/state"
            let files = try FileManager.default.subpathsOfDirectory(atPath: state)
            #expect(files.contains { $0.hasPrefix("recovery/p/") && $0.contains("-quarantine-") })
            #expect(files.contains { $0.hasPrefix("recovery/p/") && !$0.contains("-quarantine-") })
            #expect(files.contains("state.sqlite") && files.contains("stores/p.sqlite"))
            for relative in [""] + files {
                let path = relative.isEmpty ? state : state + "/" + relative
                let attributes = try FileManager.default.attributesOfItem(atPath: path)
                let mode = try #require(attributes[.posixPermissions] as? Int)
                #expect(mode & 0o007 == 0, "\(relative.isEmpty ? "state dir" : relative) is open to others: \(String(mode, radix: 8))")
                // Applications in the daemon's group write the stores; nothing else is group-writable.
                if !relative.hasPrefix("stores") {
                    #expect(mode & 0o020 == 0, "\(relative) is group-writable: \(String(mode, radix: 8))")
                }
            }
            let store = try #require(try FileManager.default.attributesOfItem(atPath: a.store("p"))[.posixPermissions] as? Int)
            #expect(store == 0o660, "the store is 0660: \(String(store, radix: 8))")
        }
    }

    /// The running daemon's control socket: root is served, another user is refused — by the
    /// file mode, and by SO_PEERCRED even when the file mode lets it connect.
    @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root and setpriv"))
    func theDaemonsControlSocketRefusesOtherUsers() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            #expect(try await a.ctl(["status"]).status == 0)
            let tetherctl = try BuiltProducts.executable("tetherctl")
            let asNobody = ["--reuid=65534", "--regid=65534", "--clear-groups", tetherctl, "--socket", a.socket, "status", "--json"]
            let byMode = try await ChildProcess.run("/usr/bin/setpriv", asNobody)
            #expect(byMode.status == 3, "\(byMode)")
            chmod(a.socket, 0o666)
            let byCredentials = try await ChildProcess.run("/usr/bin/setpriv", asNobody)
            #expect(byCredentials.status == 4, "\(byCredentials)")
            #expect(byCredentials.standardError.contains("permission denied: uid 65534"))
            #expect(!byCredentials.standardOutput.contains("\"partitions\""), "no status for other users")
            #expect(try await a.ctl(["status"]).status == 0, "root is still served")
        }
    }

    /// Issue 32, two roles on the running daemon's control socket, with real uids and gids
    /// (numeric, through setpriv; none needs to exist): a member of the store group (root's
    /// group 0 here, the daemon's group) reads but may not pause — exit 4 and a notice in the
    /// daemon's log naming uid, pid and command; a member of the operator group pauses; root
    /// resumes.
    @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root and setpriv"))
    func storeGroupReadsAndOnlyTheOperatorGroupChanges() async throws {
        let operatorGID = 48_000 + Int.random(in: 0..<1000)
        try await withCluster { cluster in
            chmod(cluster.dir.path, 0o755)  // the socket's directory must be reachable for other uids
            let a = try cluster.agent("a", partitions: ["p"], extra: "[control]\noperator_group = \(operatorGID)")
            try await a.start()
            try await a.waitSynced("p")
            let tetherctl = try BuiltProducts.executable("tetherctl")
            func run(_ uid: Int, _ groups: [Int], _ command: [String]) async throws -> ChildProcess.Result {
                let credentials = ["--reuid=\(uid)", "--regid=\(uid)", "--groups=\(groups.map(String.init).joined(separator: ","))"]
                return try await ChildProcess.run("/usr/bin/setpriv", credentials + [tetherctl, "--socket", a.socket] + command)
            }

            let status = try await run(49_101, [0], ["status", "--json"])
            #expect(status.status == 0, "\(status)")
            #expect(status.standardOutput.contains("\"partitions\""))
            let refused = try await run(49_101, [0], ["pause", "p"])
            #expect(refused.status == 4, "\(refused)")
            #expect(refused.standardError.contains("permission denied: pause changes the agent; uid 49101 may only read"), "\(refused)")
            // With --json the refusal is a document with its code, for scripts.
            let refusedJSON = try await run(49_101, [0], ["pause", "p", "--json"])
            #expect(refusedJSON.status == 4 && refusedJSON.standardOutput.contains(#""code" : "permission-denied""#), "\(refusedJSON)")
            try await eventually("the refusal is logged") {
                a.log.contains("control socket: refused pause from uid 49101 (pid ")
            }
            #expect(try await a.status("p")?["state"] != "paused", "the refused pause changed nothing")

            let byOperator = try await run(49_102, [0, operatorGID], ["pause", "p"])
            #expect(byOperator.status == 0, "\(byOperator)")
            #expect(try await a.status("p")?["state"] == "paused")
            #expect(try await a.ctl(["resume", "p"]).status == 0, "root may change")
            try await a.waitSynced("p")
        }
    }
}

