import Foundation
import Testing
import TetherTestSupport

/// tether-server under `Type=notify` as its unit runs it: READY=1 once listening, RELOADING=1
/// and READY=1 around a SIGHUP reload (systemd 252 has no Type=notify-reload), STOPPING=1.
@Suite struct ServerNotifyEndToEndTests {
    @Test func readyReloadingAndStoppingAreSentToSystemd() async throws {
        try await withCluster { cluster in
            await cluster.killServer()
            let listener = try NotifySocketListener(directory: cluster.dir)
            let server = try ChildProcess.start(
                try BuiltProducts.executable("tether-server"), ["--config", cluster.dir.appending("server.toml")],
                environment: ChildProcess.inheritedEnvironment(adding: listener.environment))
            defer { server.signal(SIGKILL) }
            #expect(await listener.waitForCount(1, timeout: .seconds(30)) { $0.contains("READY=1") })
            server.signal(SIGHUP)
            #expect(await listener.waitForCount(1, timeout: .seconds(30)) { $0.contains("RELOADING=1") && $0.contains("MONOTONIC_USEC=") })
            #expect(await listener.waitForCount(2, timeout: .seconds(30)) { $0.contains("READY=1") }, "READY=1 again after the reload")
            server.signal(SIGTERM)
            #expect(await listener.waitForCount(1, timeout: .seconds(30)) { $0.contains("STOPPING=1") })
            #expect(await server.wait(timeout: .seconds(30)).status == 0)
        }
    }
}
