import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// `tetherd` end to end (issue "tetherd and tetherctl"): real server, real agents, `sqlite3` writers.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct AgentSyncTests {
    @Test func twoAgentsThreePartitionsConverge() async throws {
        try await withCluster { cluster in
            let partitions = ["store-1", "store-2", "catalog"]
            let a = try cluster.agent("a", partitions: partitions)
            let b = try cluster.agent("b", partitions: partitions)
            try await a.start()
            try await b.start()
            for p in partitions { try await a.waitSynced(p); try await b.waitSynced(p) }
            // SQLite's memory settings were applied before the first connection opened.
            #expect(!a.log.contains("SQLite was initialised before its memory settings"), "\(a.log.suffix(2000))")
            for (i, p) in partitions.enumerated() {
                try await a.sql(p, "INSERT INTO orders (id, customer, total) VALUES ('a\(i)', 'alice', \(i).5)")
                try await b.sql(p, "BEGIN; INSERT INTO orders (id, customer, total, note) VALUES ('b\(i)', 'bob', \(i), 'x'); INSERT INTO orders (id, customer, total) VALUES ('c\(i)', 'carol', 3); COMMIT;")
            }
            for p in partitions { try await a.waitSynced(p); try await b.waitSynced(p) }
            for p in partitions { try await a.waitSynced(p); try await b.waitSynced(p) }
            for (i, p) in partitions.enumerated() {
                let expected = "a\(i)|alice|\(i).5|-\nb\(i)|bob|\(i).0|x\nc\(i)|carol|3.0|-\n"
                #expect(try await a.rows(p) == expected, "\(p) on a")
                #expect(try await b.rows(p) == expected, "\(p) on b")
            }
            // Concurrent edits: different fields both kept; the same field resolves in server
            // order; a delete wins over a concurrent update.
            try await a.ctl(["pause", "store-1"])
            try await a.sql("store-1", "UPDATE orders SET customer = 'ALICE' WHERE id = 'a0'; UPDATE orders SET total = 100 WHERE id = 'b0'; UPDATE orders SET note = 'late' WHERE id = 'c0'")
            try await b.sql("store-1", "UPDATE orders SET total = 42 WHERE id = 'a0'; UPDATE orders SET total = 200 WHERE id = 'b0'; DELETE FROM orders WHERE id = 'c0'")
            try await b.waitSynced("store-1")
            try await a.ctl(["resume", "store-1"])
            try await a.waitSynced("store-1")
            try await b.waitSynced("store-1")
            let expected = "a0|ALICE|42.0|-\nb0|bob|100.0|x\n"
            let rowsA = try await a.rows("store-1"), rowsB = try await b.rows("store-1")
            #expect(rowsA == expected, "a: \(rowsA)")
            #expect(rowsB == expected, "b: \(rowsB)")
        }
    }

    @Test func serverKilledAndRestartedAgentsReconnectAndLoseNothing() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"])
            try await a.start()
            try await b.start()
            try await a.waitSynced("p")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('before', 'x', 1)")
            try await a.waitSynced("p")
            await cluster.killServer()
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('while-down', 'y', 2)")
            try await eventually("a sees the server gone") { try await a.status("p")?["state"]?.stringValue == "offline" }
            try await cluster.startServer()
            try await a.waitSynced("p", timeout: 90)
            try await b.waitSynced("p", timeout: 90)
            #expect(try await b.rows("p") == "before|x|1.0|-\nwhile-down|y|2.0|-\n")
        }
    }

    @Test func agentKilledMidUploadLosesAndDuplicatesNothing() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"])
            try await a.start()
            try await b.start()
            try await a.waitSynced("p")
            let values = (1...300).map { "('r\($0)', 'c', \($0))" }.joined(separator: ",")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES \(values)")
            await a.stop(SIGKILL)
            try await a.sql("p", "UPDATE orders SET total = total + 1000 WHERE id = 'r1'")
            try await a.start()
            try await a.waitSynced("p")
            try await b.waitSynced("p")
            #expect(try await b.sql("p", "SELECT count(*), sum(total) FROM orders") == "300|\(Double((1...300).reduce(0, +) + 1000))\n")
            #expect(try await a.rows("p") == (try await b.rows("p")))
        }
    }

    @Test func sighupAddsAndRemovesPartitionsAndKeepsTheOldConfigWhenInvalid() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('kept', 'x', 1)")
            try Cluster.write(ClusterAgent.config(dir: a.dir, url: cluster.url, partitions: ["p", "q"], extra: ""), to: a.configPath)
            a.signal(SIGHUP)
            try await eventually("q added") { try await a.status("q") != nil }
            try await a.waitSynced("q")
            try await a.waitSynced("p")
            try Cluster.write(ClusterAgent.config(dir: a.dir, url: cluster.url, partitions: ["q"], extra: ""), to: a.configPath)
            a.signal(SIGHUP)
            try await eventually("p removed") { try await a.status("p") == nil }
            try Cluster.write("colour = \"blue\"\n" + ClusterAgent.config(dir: a.dir, url: cluster.url, partitions: [], extra: ""), to: a.configPath)
            a.signal(SIGHUP)
            try await eventually("reload refused") { a.log.contains("reload refused, the running configuration is kept") && a.log.contains("colour: unknown key") }
            #expect(try await a.status("q") != nil, "the old configuration is kept")
        }
    }

    @Test func readinessStatusAndStoppingReachSystemd() async throws {
        try await withCluster { cluster in
            let listener = try NotifySocketListener(directory: cluster.dir)
            let a = try cluster.agent("a", partitions: ["p", "q"])
            try await a.start(environment: listener.environment)
            #expect(await listener.waitForCount(1, timeout: .seconds(30)) { $0.contains("READY=1") })
            try await a.waitSynced("p")
            try await a.waitSynced("q")
            #expect(await listener.waitForCount(1, timeout: .seconds(30)) { $0.contains("STATUS=2 partitions: 2 synced") })
            let start = ContinuousClock.now
            let result = await a.stop(SIGTERM)
            #expect(result?.status == 0)
            #expect(ContinuousClock.now - start < .seconds(5))
            #expect(await listener.waitForCount(1, timeout: .seconds(30)) { $0.contains("STOPPING=1") })
        }
    }

    @Test func watchdogPingsStopWhileASessionIsWedgedAndResumeAfter() async throws {
        try await withCluster { cluster in
            let listener = try NotifySocketListener(directory: cluster.dir)
            let wedge = cluster.dir.appending("wedge")
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"])
            try await a.start(environment: listener.environment.merging(["WATCHDOG_USEC": "1000000", "TETHER_FAULT_WEDGE_FILE": wedge]) { $1 })
            try await b.start()
            try await a.waitSynced("p")
            try await b.waitSynced("p")
            let isPing: @Sendable (String) -> Bool = { $0 == "WATCHDOG=1" }
            #expect(await listener.waitForCount(2, timeout: .seconds(30), where: isPing))
            // Wedge a's session on its next event: a download of b's write.
            #expect(FileManager.default.createFile(atPath: wedge, contents: nil))
            try await b.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('w', 'w', 1)")
            try await b.waitSynced("p")
            try await eventually("pings stopped", timeout: .seconds(30)) { a.log.contains("no progress: watchdog pings stopped") }
            try await listener.flush()
            let stalled = listener.count(where: isPing)
            try await consistently("no pings while wedged", for: .milliseconds(2500)) { listener.count(where: isPing) == stalled }
            try FileManager.default.removeItem(atPath: wedge)
            #expect(await listener.waitForCount(stalled + 1, timeout: .seconds(30), where: isPing), "pings resume")
            try await a.waitSynced("p")
            #expect(try await a.rows("p") == "w|w|1.0|-\n")
        }
    }

    /// tetherd as `tetherd.service` runs it: systemd's environment, journald chosen by itself.
    @Test(.enabled(if: Journald.isAvailable, "needs root to run systemd-journald"))
    func runsTheWayTheUnitRunsIt() async throws {
        try await Journald.ensureRunning()
        try await withCluster { cluster in
            let listener = try NotifySocketListener(directory: cluster.dir)
            let a = try cluster.agent("a", partitions: ["p"])
            let environment = listener.environment.merging([
                "WATCHDOG_USEC": "4000000", "STATE_DIRECTORY": a.dir + "/state", "RUNTIME_DIRECTORY": a.dir,
                "INVOCATION_ID": "0123456789abcdef0123456789abcdef", "JOURNAL_STREAM": "0:0",
            ]) { $1 }
            try await a.start(environment: environment, logDestination: "auto")
            #expect(await listener.waitForCount(1, timeout: .seconds(30)) { $0.contains("READY=1") })
            #expect(await listener.waitForCount(1, timeout: .seconds(30)) { $0 == "WATCHDOG=1" })
            try await a.waitSynced("p")
            a.signal(SIGHUP)
            #expect(await listener.waitForCount(1, timeout: .seconds(30)) { $0.contains("RELOADING=1") && $0.contains("MONOTONIC_USEC=") })
            #expect(await listener.waitForCount(2, timeout: .seconds(30)) { $0.contains("READY=1") }, "READY=1 again after the reload")
            let pid = try #require(a.processID)
            let stopped = await a.stop(SIGTERM)
            #expect(stopped?.status == 0)
            #expect(await listener.waitForCount(1, timeout: .seconds(10)) { $0.contains("STOPPING=1") })
            let records = try await eventually("journal records", timeout: .seconds(30)) { () -> [JournalRecord]? in
                let found = try await Journald.records(matching: ["_PID=\(pid)"])
                return found.contains { $0["MESSAGE"]?.contains("configuration reloaded") == true } ? found : nil
            }
            #expect(records.allSatisfy { $0["SYSLOG_IDENTIFIER"] == "tetherd" && $0["PRIORITY"] != nil && $0["CODE_FILE"] != nil })
            #expect(records.contains { $0["TETHER_PARTITION"] == "p" })
            #expect(a.log.isEmpty || !a.log.contains("configuration reloaded"), "records went to journald, not stderr")
        }
    }

    @Test func statusJSONHasTheFieldsOfSpec8() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            let status = try #require(try await a.status("p"))
            for field in ["name", "state", "server_version", "unsynced_changes", "last_error", "pending_reset"] {
                #expect(status[field] != nil, "missing \(field)")
            }
            #expect(status["state"] == "synced")
            #expect(try await a.ctl(["wait-synced", "nope"]).status == 1)
            #expect(try await a.ctl(["log-level", "trace"]).status == 0)
        }
    }

    /// A restart never forgets why: the last error a partition met is shown again after a
    /// restart, even when the server cannot be reached to say it again.
    @Test func theLastErrorSurvivesARestart() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try Cluster.write("wrong-token\n", to: a.dir + "/token", mode: 0o600)
            try await a.start()
            try await eventually("203 reported", timeout: .seconds(30)) { try await a.status("p")?["last_error"]?["code"] == 203 }
            await a.stop()
            await cluster.killServer()
            try await a.start()
            let error = try #require(try await a.status("p")?["last_error"])
            #expect(error["code"] == 203)
            #expect(error["message"]?.stringValue?.isEmpty == false)
        }
    }

    @Test func badTokenIsRetriedAndRecoversOnceTheTokenFileIsFixed() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try Cluster.write("wrong-token\n", to: a.dir + "/token", mode: 0o600)
            try await a.start()
            try await eventually("203 reported", timeout: .seconds(30)) {
                try await a.status("p")?["last_error"]?["code"] == 203
            }
            #expect(!a.log.contains("wrong-token"), "tokens are never logged")
            try Cluster.write(ClusterSettings.defaultToken + "\n", to: a.dir + "/token", mode: 0o600)
            try await a.waitSynced("p", timeout: 90)
        }
    }

    @Test(.enabled(if: Journald.isAvailable, "needs root to run systemd-journald"))
    func badTokenIsLoggedToTheJournalWithBackoff() async throws {
        try await Journald.ensureRunning()
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try Cluster.write("wrong-token\n", to: a.dir + "/token", mode: 0o600)
            try await a.start(logDestination: "journal")
            let pid = try #require(a.processID)
            let records = try await eventually("three 203 records", timeout: .seconds(30)) { () -> [JournalRecord]? in
                let found = try await Journald.records(matching: ["_PID=\(pid)", "TETHER_ERROR_CODE=203"])
                return found.count >= 3 ? found : nil
            }
            for record in records {
                #expect(record["PRIORITY"] == "3")
                #expect(record["TETHER_PARTITION"] == "p")
                #expect(record["SYSLOG_IDENTIFIER"] == "tetherd")
                #expect(record["MESSAGE"]?.contains("203") == true)
            }
            // Capped exponential backoff: the gaps between attempts grow.
            let times = records.compactMap { $0["__REALTIME_TIMESTAMP"].flatMap(Double.init) }.sorted()
            #expect(times.count >= 3)
            if times.count >= 3 { #expect(times[2] - times[1] > times[1] - times[0], "\(times)") }
            let everything = try await Journald.records(matching: ["_PID=\(pid)"])
            #expect(!everything.contains { $0.description.contains("wrong-token") }, "tokens are never logged")
            try Cluster.write(ClusterSettings.defaultToken + "\n", to: a.dir + "/token", mode: 0o600)
            try await a.waitSynced("p", timeout: 90)
        }
    }

    @Test func aGroupReadableTokenFileIsRefusedAtStart() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            chmod(a.dir + "/token", 0o640)
            let result = try await ChildProcess.run(try BuiltProducts.executable("tetherd"), ["--config", a.configPath])
            #expect(result.status == 2)
            #expect(result.standardError.contains("server.token_file"))
            #expect(result.standardError.contains("readable by group or others"))
        }
    }
}
