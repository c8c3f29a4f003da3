import Foundation
import Testing
import TetherTestSupport

/// tether-server under `Type=notify` as its unit runs it: READY=1 once listening, RELOADING=1
/// and READY=1 around a SIGHUP reload (systemd 252 has no Type=notify-reload), STOPPING=1.
@Suite struct ServerNotifyEndToEndTests {
    @Test func readyReloadingAndStoppingAreSentToSystemd() async throws {
        // The listener exists before the cluster, so the cluster's own start (which chooses
        // other ports when one was taken meanwhile) hands it to the server: a server killed
        // and started again by the test could lose its port to another test's connection.
        let notifyDir = try TemporaryDirectory(prefix: "tether-notify")
        defer { notifyDir.remove() }
        let listener = try NotifySocketListener(directory: notifyDir)
        defer { listener.stop() }
        try await withCluster(ClusterSettings(serverEnvironment: listener.environment)) { cluster in
            let server = try #require(cluster.serverProcess)
            #expect(await listener.waitForCount(1, timeout: .seconds(30)) { $0.contains("READY=1") }, "\(listener.messages) \(server.standardError)")
            server.signal(SIGHUP)
            #expect(await listener.waitForCount(1, timeout: .seconds(30)) { $0.contains("RELOADING=1") && $0.contains("MONOTONIC_USEC=") }, "\(listener.messages)")
            #expect(await listener.waitForCount(2, timeout: .seconds(30)) { $0.contains("READY=1") }, "READY=1 again after the reload: \(listener.messages)")
            server.signal(SIGTERM)
            #expect(await listener.waitForCount(1, timeout: .seconds(30)) { $0.contains("STOPPING=1") }, "\(listener.messages)")
            #expect(await server.wait(timeout: .seconds(30)).status == 0, "\(server.standardError)")
        }
    }
}
