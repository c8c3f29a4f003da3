import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Seed 23097527 (issue 16): a server that closes the connection while an agent's WebSocket
/// upgrade is in flight used to hang the client library's connect for ever — the agent stayed
/// `connecting` until the watchdog had systemd restart it. The agent now dials with its own
/// upgrade guard: such an attempt fails at once and is retried within the reconnect backoff.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct WebSocketUpgradeEndToEndTests {
    /// The fake server reads the upgrade request and half-closes without answering.
    @Test func aServerThatHalfClosesDuringTheUpgradeIsRetriedWithinTheBackoff() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let fake = try FakeSyncServer(.init(bytes: { [] }, closeAfter: false, upgrade: .halfClose))
            defer { fake.stop() }
            try Cluster.write(ClusterAgent.config(dir: a.dir, url: fake.url, partitions: ["p"], extra: ""), to: a.configPath)
            try await a.start()
            do {
                try await eventually("the attempt fails with a clear reason", timeout: .seconds(30)) {
                    a.log.contains("the server closed the connection before answering the WebSocket upgrade")
                }
            } catch {
                Issue.record("agent log: \(a.log.suffix(3000))")
                throw error
            }
            try await eventually("the agent retries with backoff", timeout: .seconds(30)) { fake.connections >= 3 }
            #expect(!a.log.contains("has hung for more than"))
            #expect(try await a.status("p")?["state"] == "offline")
            // Pointed at the real server (a reload), it syncs without a restart.
            try Cluster.write(ClusterAgent.config(dir: a.dir, url: cluster.url, partitions: ["p"], extra: ""), to: a.configPath)
            a.signal(SIGHUP)
            try await a.waitSynced("p", timeout: 60)
        }
    }

    /// A server that reads the upgrade request and never answers (nor closes): each attempt
    /// ends at the 10 s upgrade deadline and is retried.
    @Test func anUpgradeWithoutAnAnswerEndsAtTheDeadline() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let fake = try FakeSyncServer(.init(bytes: { [] }, closeAfter: false, upgrade: .silence))
            defer { fake.stop() }
            try Cluster.write(ClusterAgent.config(dir: a.dir, url: fake.url, partitions: ["p"], extra: ""), to: a.configPath)
            try await a.start()
            try await eventually("the attempt ends at the deadline", timeout: .seconds(40)) {
                a.log.contains("no answer to the WebSocket upgrade within 10 s")
            }
            try await eventually("and is retried", timeout: .seconds(30)) { fake.connections >= 2 }
            #expect(try await a.ctl(["status"]).status == 0, "the control socket answers meanwhile")
        }
    }

    /// The campaign's original sequence: the upgrade request held by a stalled route, the
    /// server killed as the route comes back. The agent syncs once the server is back, on its
    /// own: no restart, no hung attempt reported.
    @Test func seed23097527AConnectionClosedDuringTheUpgradeIsRetried() async throws {
        try await withCluster { cluster in
            let proxy = try LoopbackProxy(targetPort: cluster.port)
            defer { proxy.stop() }
            let a = try cluster.agent("a", partitions: ["p"])
            try Cluster.write(
                ClusterAgent.config(dir: a.dir, url: "ws://127.0.0.1:\(proxy.port)/sync", partitions: ["p"], extra: ""), to: a.configPath)
            proxy.mode = .stall
            try await a.start()
            try await eventually("the agent's connection reached the proxy") { proxy.acceptedConnections > 0 }
            proxy.mode = .pass
            await cluster.killServer()
            try await cluster.startServer()
            try await a.waitSynced("p", timeout: 60)
            #expect(!a.log.contains("has hung for more than"))
        }
    }
}
