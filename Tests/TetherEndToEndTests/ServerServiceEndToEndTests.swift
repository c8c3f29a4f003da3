import Foundation
import Testing
import TetherTestSupport

/// tether-server as a systemd service (issue "Operable at fleet scale"): watchdog pings while
/// it makes progress, RELOADING=1 then READY=1 around a SIGHUP that changes the log level.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ServerServiceEndToEndTests {
    @Test func watchdogPingsAndReloadIsAnnounced() async throws {
        let notifyDir = try TemporaryDirectory(prefix: "tether-notify")
        defer { notifyDir.remove() }
        let notify = try NotifySocketListener(directory: notifyDir)
        defer { notify.stop() }
        // A 2 s watchdog: pings every second.
        let cluster = try await Cluster(ClusterSettings(serverEnvironment: notify.environment.merging(["WATCHDOG_USEC": "2000000"]) { $1 }))
        do {
            #expect(await notify.first(timeout: .seconds(30)) { $0 == "READY=1" } != nil)
            #expect(await notify.waitForCount(3, timeout: .seconds(30)) { $0 == "WATCHDOG=1" }, "\(notify.messages)")
            let server = try #require(cluster.serverProcess)
            #expect(!server.standardError.contains("log level is now debug"))
            let config = try String(contentsOfFile: cluster.dir.appending("server.toml"), encoding: .utf8)
            try Cluster.write("log_level = \"debug\"\n" + config, to: cluster.dir.appending("server.toml"))
            let readyBefore = notify.count { $0 == "READY=1" }
            server.signal(SIGHUP)
            #expect(await server.waitForOutput("log level is now debug", timeout: .seconds(30)))
            #expect(await notify.waitForCount(readyBefore + 1, timeout: .seconds(30)) { $0 == "READY=1" })
            let messages = notify.messages
            let reloading = try #require(messages.lastIndex { $0.hasPrefix("RELOADING=1\nMONOTONIC_USEC=") }, "\(messages)")
            let ready = try #require(messages.lastIndex { $0 == "READY=1" })
            #expect(reloading < ready, "RELOADING=1 before READY=1: \(messages)")
            // Debug records now reach the log (a sync connection opening is logged at debug).
            let agent = try cluster.agent("a", partitions: ["p"])
            try await agent.start()
            try await agent.waitSynced("p")
            #expect(await server.waitForOutput("sync connection opened", timeout: .seconds(30)))
        } catch {
            await cluster.shutdown()
            throw error
        }
        await cluster.shutdown()
    }
}
