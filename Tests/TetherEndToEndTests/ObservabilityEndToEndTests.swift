import Foundation
import Glibc
import Testing
import TetherControl
import TetherTestSupport

/// Metrics, health check and operator conveniences end to end (issue "Operable at fleet
/// scale"): a real server scraped over HTTP on its listener and on `metrics_listen`, a real
/// agent through `tetherctl metrics` and its `metrics_textfile`, while syncs, a reset with
/// hooks, and a lost server happen.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ObservabilityEndToEndTests {
    static func agentMetrics(_ agent: ClusterAgent) async throws -> Exposition {
        let result = try await agent.ctl(["metrics"])
        guard result.status == 0 else { throw TestSupportError("tetherctl metrics failed: \(result)") }
        return Exposition(result.standardOutput)
    }

    static func serverMetrics(_ port: UInt16) throws -> Exposition {
        let response = try HTTPGet.get(port: port, path: "/metrics")
        guard response.status == 200 else { throw TestSupportError("/metrics answered \(response.status): \(response.body)") }
        return Exposition(response.body)
    }

    @Test func seriesMoveAsSyncsResetsAndErrorsHappen() async throws {
        // The metrics port is found free here and bound by the server later: on a busy machine
        // another test's listener may take it in between (a clean-clone `make test` met it
        // once), and the server then never listens on it. Another port is tried; a server that
        // still does not listen fails the test with its log.
        for attempt in 1...3 {
            let metricsPort = try LoopbackPort.free()
            let cluster = try await Cluster(ClusterSettings(serverExtra: "metrics_listen = \"127.0.0.1:\(metricsPort)\""))
            let server = try #require(cluster.serverProcess)
            guard await server.waitForOutput("metrics and health check listening on 127.0.0.1:\(metricsPort)", timeout: .seconds(30)) else {
                let log = server.standardError
                await cluster.shutdown()
                if attempt < 3 { continue }
                Issue.record("the server never listened on metrics_listen 127.0.0.1:\(metricsPort): \(log.suffix(3000))")
                return
            }
            do {
                try await run(cluster, metricsPort: metricsPort)
            } catch {
                await cluster.shutdown()
                throw error
            }
            await cluster.shutdown()
            return
        }
    }

    private func run(_ cluster: Cluster, metricsPort: UInt16) async throws {
        // Health needs no token, on both listeners; metrics are only on metrics_listen
        // (public_metrics = false by default: partition names stay off the devices' network).
        for port in [cluster.port, metricsPort] {
            let health = try HTTPGet.get(port: port, path: "/healthz")
            #expect(health.status == 200 && health.body == "ok\n", "\(port): \(health)")
        }
        #expect(try HTTPGet.get(port: cluster.port, path: "/metrics").status == 404)
        let idle = try Self.serverMetrics(metricsPort)
        #expect(idle["tether_server_connected_devices"] == 0)
        #expect(idle["tether_server_changes_integrated_total"] == 0)

        let a = try cluster.agent("a", partitions: ["p"], extra: "metrics_textfile = \"\(cluster.dir.appending("a"))/tether.prom\"")
        try Cluster.write("#!/bin/sh\nexit 0\n", to: a.dir + "/hooks/before", mode: 0o755)
        try Cluster.write("#!/bin/sh\nexit 3\n", to: a.dir + "/hooks/after", mode: 0o755)
        try Cluster.write(
            ClusterAgent.config(dir: a.dir, url: cluster.url, partitions: ["p"], extra: """
                metrics_textfile = "\(a.dir)/tether.prom"
                [reset]
                before_hook = "\(a.dir)/hooks/before"
                after_hook = "\(a.dir)/hooks/after"
                """), to: a.configPath)
        let b = try cluster.agent("b", partitions: ["p"])
        try await a.start()
        try await b.start()
        try await a.waitSynced("p")
        try await b.waitSynced("p")

        // Connected, bound, synced.
        let connected = try Self.serverMetrics(metricsPort)
        #expect(connected["tether_server_connected_devices"] == 2)
        #expect(connected["tether_server_bound_sessions"] == 2)
        var agent = try await Self.agentMetrics(a)
        #expect(agent[#"tether_agent_partition_state{partition="p",state="synced"}"#] == 1)
        #expect(agent["tether_agent_connected"] == 1)
        #expect((agent[#"tether_agent_last_synced_timestamp_seconds{partition="p"}"#] ?? 0) > Date().timeIntervalSince1970 - 120)
        let first = Exposition(try String(contentsOfFile: a.dir + "/tether.prom", encoding: .utf8))
        #expect(first[#"tether_agent_partition_state{partition="p",state="connecting"}"#] != nil, "metrics_textfile written at start")

        // A sync moves the server's counters and versions and the agents' versions.
        try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r1', 'one', 1), ('r2', 'two', 2)")
        try await a.waitSynced("p")
        try await b.waitSynced("p")
        let synced = try Self.serverMetrics(metricsPort)
        #expect((synced["tether_server_changes_integrated_total"] ?? 0) >= 1)
        #expect((synced["tether_server_upload_bytes_total"] ?? 0) > (connected["tether_server_upload_bytes_total"] ?? 0))
        #expect((synced["tether_server_download_bytes_total"] ?? 0) > (connected["tether_server_download_bytes_total"] ?? 0))
        #expect((synced["tether_server_integrate_duration_seconds_count"] ?? 0) >= 1)
        let version = try #require(synced[#"tether_server_partition_version{partition="p"}"#])
        #expect(version >= 1)
        agent = try await Self.agentMetrics(b)
        #expect(agent[#"tether_agent_server_version{partition="p"}"#] == version)
        #expect(agent[#"tether_agent_unsynced_changes{partition="p"}"#] == 0)

        // A restore: a resets (hooks: before succeeds, after fails), the server counts the error it sent.
        let snapshot = try await cluster.admin(["snapshot", "p"])
        try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('r3', 'three', 3)")
        try await a.waitSynced("p")
        try await cluster.admin(["restore", "p", snapshot, "--rollback"])
        let reset = try await eventually("a reset", timeout: .seconds(60)) { () -> JSONValue? in
            guard let last = try await a.json(["resets"])["resets"]?.arrayValue?.last,
                last["outcome"]?.stringValue != "in-progress" else { return nil }
            return last
        }
        let outcome = try #require(reset["outcome"]?.stringValue)
        let code = try #require(reset["error_code"]?.numberValue.map { Int($0) })
        try await a.waitSynced("p", timeout: 60)
        agent = try await Self.agentMetrics(a)
        #expect(agent[#"tether_agent_resets_total{partition="p",outcome="\#(outcome)"}"#] == 1, "\(outcome)")
        #expect(agent[#"tether_agent_hook_runs_total{hook="before-reset",result="succeeded"}"#] == 1)
        #expect(agent[#"tether_agent_hook_runs_total{hook="after-reset",result="failed"}"#] == 1)
        let afterReset = try Self.serverMetrics(metricsPort)
        #expect((afterReset[#"tether_server_sync_errors_total{code="\#(code)"}"#] ?? 0) >= 1, "error \(code) counted")

        // The server goes away: the agent counts the reconnects and shows itself offline.
        let reconnectsBefore = try #require(agent["tether_agent_reconnects_total"])
        await cluster.killServer()
        try await eventually("a offline and reconnecting", timeout: .seconds(30)) {
            let m = try await Self.agentMetrics(a)
            return m["tether_agent_connected"] == 0 && m[#"tether_agent_partition_state{partition="p",state="offline"}"#] == 1
                && (m["tether_agent_reconnects_total"] ?? 0) > reconnectsBefore
        }
        try await cluster.startServer()
        try await a.waitSynced("p", timeout: 90)
        agent = try await Self.agentMetrics(a)
        #expect(agent["tether_agent_connected"] == 1)
        #expect(!(try await a.ctl(["metrics"])).standardOutput.contains(cluster.token), "no token in the metrics")
        // The textfile follows within its 15 s period.
        try await eventually("metrics_textfile shows a synced and connected", timeout: .seconds(40)) {
            let text = (try? String(contentsOfFile: a.dir + "/tether.prom", encoding: .utf8)) ?? ""
            let file = Exposition(text)
            return file["tether_agent_connected"] == 1 && file[#"tether_agent_partition_state{partition="p",state="synced"}"#] == 1
                && (file[#"tether_agent_resets_total{partition="p",outcome="\#(outcome)"}"#] ?? 0) == 1
        }
    }

    @Test func tetherctlFindsTheSocketWaitsBoundedAndWatches() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            let ctl = try BuiltProducts.executable("tetherctl")

            // --config finds a non-default control_socket; so does TETHER_SOCKET.
            let viaConfig = try await ChildProcess.run(ctl, ["--config", a.configPath, "status"])
            #expect(viaConfig.status == 0, "\(viaConfig)")
            #expect(viaConfig.standardOutput.contains("server \(cluster.url): connected since "), "\(viaConfig.standardOutput)")
            let viaEnvironment = try await ChildProcess.run(
                ctl, ["status", "--json"], environment: ChildProcess.inheritedEnvironment(adding: ["TETHER_SOCKET": a.socket]))
            #expect(viaEnvironment.status == 0, "\(viaEnvironment)")
            let status = try JSONDecoder().decode(JSONValue.self, from: Data(viaEnvironment.standardOutput.utf8))
            #expect(status["connection"]?["server_url"]?.stringValue == cluster.url)
            #expect(status["connection"]?["connected"] == true)
            #expect(status["connection"]?["connected_since"]?.stringValue != nil)
            let missing = try await ChildProcess.run(ctl, ["--config", cluster.dir.appending("none.toml"), "status"])
            #expect(missing.status == 2, "\(missing)")

            // --timeout: a socket that accepts but never answers.
            let silent = cluster.dir.appending("silent.sock")
            let listener = try Self.silentListener(silent)
            defer { close(listener) }
            let started = ContinuousClock.now
            let timedOut = try await ChildProcess.run(ctl, ["--socket", silent, "--timeout", "1", "status"])
            #expect(timedOut.status == 1, "\(timedOut)")
            #expect(timedOut.standardError.contains("did not answer within"), "\(timedOut)")
            #expect(ContinuousClock.now - started < .seconds(20))
            let unreachable = try await ChildProcess.run(ctl, ["--socket", cluster.dir.appending("nothing.sock"), "status"])
            #expect(unreachable.status == 3, "\(unreachable)")

            // --watch without a terminal: one plain table after another, no escape sequences.
            let watch = try ChildProcess.start(ctl, ["--socket", a.socket, "status", "--watch", "--interval", "0.2"])
            try await eventually("two tables") { watch.standardOutput.components(separatedBy: "PARTITION").count >= 3 }
            watch.signal(SIGTERM)
            _ = await watch.wait(timeout: .seconds(10))
            #expect(!watch.standardOutput.contains("\u{1B}["))
        }
    }

    /// A listening Unix socket nobody accepts from: connects succeed (backlog), answers never come.
    static func silentListener(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, byte) in path.utf8.enumerated() where i < buffer.count - 1 { buffer[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0, listen(fd, 8) == 0 else { throw TestSupportError("cannot listen on \(path)") }
        return fd
    }
}
