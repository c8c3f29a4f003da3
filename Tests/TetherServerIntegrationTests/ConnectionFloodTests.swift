import Foundation
import Testing
import TetherProtocol
import TetherServer
import TetherTestSupport

/// 1,000 hostile connections at once against a real server, while an honest device syncs:
/// what they may cost in memory, and how fast slow headers are closed. They load a 2-core
/// machine (and block threads on socket calls), so `make test` runs this suite alone, after
/// the other integration tests.
@Suite(.serialized) struct ConnectionFloodTests {
    @Test(.timeLimit(.minutes(5)))
    func aThousandPartialMessagesBeforeAuthenticationKeepMemoryBounded() async throws {
        let limits = "connections_per_peer = 5000\nheader_timeout_seconds = 600\nauth_timeout_seconds = 600"
        try await withServer(extraConfig: ConnectionLimitsTests.config(limits)) { server in
            try await ConnectionLimitsTests.honestSync(server, row: "before")
            guard let pid = server.process?.processIdentifier else { throw ServerFailure("no server process") }
            let idle = PlainSocket.residentBytes(of: pid)
            var sockets: [PlainSocket] = []
            for _ in 0..<1000 {
                let socket = try PlainSocket(port: server.port)
                #expect(socket.upgradeToWebSocket())
                sockets.append(socket)
            }
            // Each announces a message as large as a frame may be and sends 512 KiB of it:
            // without a limit the server would buffer 500 MB.
            let chunk = [UInt8](repeating: 0x5A, count: 64 * 1024)
            var peak = idle
            for (i, socket) in sockets.enumerated() {
                if socket.send(PlainSocket.binaryFrameHead(length: ProtocolLimits.maxFrameBytes)) {
                    for _ in 0..<8 where socket.send(chunk) {}
                }
                if i % 50 == 0 { peak = max(peak, PlainSocket.residentBytes(of: pid)) }
            }
            peak = max(peak, PlainSocket.residentBytes(of: pid))
            print("ConnectionFloodTests: server RSS \(idle >> 20) MiB idle, \(peak >> 20) MiB at the peak of 1,000 partial messages")
            #expect(peak - idle < 64 << 20, "server RSS grew from \(idle >> 20) MiB to \(peak >> 20) MiB")
            _ = try await eventually("every over-budget connection closed", timeout: .seconds(30)) {
                sockets.allSatisfy(\.isClosedByPeer) ? true : nil
            }
            // Each by its own budget, by its host's share (they all come from 127.0.0.1), or by the
            // budget of all once many hold bytes at once.
            var limited = 0.0
            for limit in ["unauthenticated_bytes", "unauthenticated_bytes_per_peer", "unauthenticated_bytes_total"] {
                limited += try await ConnectionLimitsTests.metric(server, #"tether_server_connections_limited_total{limit="\#(limit)"}"#)
            }
            #expect(limited >= 1000)
            #expect(server.log.contains("([limits] unauthenticated_bytes"))
            try await ConnectionLimitsTests.honestSync(server, row: "after")
        }
    }

    @Test(.timeLimit(.minutes(5)))
    func aThousandSlowHeadersAreClosedWhileAnHonestDeviceSyncs() async throws {
        let limits = "connections_per_peer = 5000\nheader_timeout_seconds = 3"
        try await withServer(extraConfig: ConnectionLimitsTests.config(limits)) { server in
            let opened = ContinuousClock.now
            var sockets: [PlainSocket] = []
            for i in 0..<1000 {
                let socket = try PlainSocket(port: server.port)
                let path = ["/sync", "/admin/status", "/metrics"][i % 3]
                #expect(socket.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"))
                sockets.append(socket)
            }
            let all = sockets
            // They keep sending a header line now and then, as slowloris does; the device syncs meanwhile.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    while !all.allSatisfy(\.isClosedByPeer) {
                        for socket in all where !socket.isClosedByPeer { _ = socket.send("X-Slow: 1\r\n") }
                        try await Task.sleep(for: .milliseconds(500))
                    }
                }
                group.addTask { try await ConnectionLimitsTests.honestSync(server, row: "during") }
                group.addTask {
                    _ = try await eventually("every slow-header connection closed", timeout: .seconds(30)) {
                        all.allSatisfy(\.isClosedByPeer) ? true : nil
                    }
                }
                try await group.waitForAll()
            }
            let took = ContinuousClock.now - opened
            #expect(took < .seconds(20), "closed after \(took)")
            #expect(try await ConnectionLimitsTests.metric(server, #"tether_server_connections_limited_total{limit="header_timeout_seconds"}"#) >= 1000)
        }
    }

    /// Issue 46, finding 1: one host fills `unauthenticated_bytes_total` with request heads it
    /// never finishes — with the defaults, 256 connections (`connections_per_peer`) × 64 KiB
    /// (`unauthenticated_bytes`) are the whole 16 MiB — and reopens each as it is closed. A
    /// health check from another host is answered and a device binds and syncs meanwhile:
    /// the host may hold only its share (`unauthenticated_bytes_per_peer`).
    @Test(.timeLimit(.minutes(5)))
    func oneHostsFloodLocksNoDeviceOut() async throws {
        try await withServer(extraConfig: ConnectionLimitsTests.config("")) { server in
            let flood = HostFlood(port: server.port, source: "127.0.0.2", connections: 256, bytes: 64 * 1024)
            flood.start()
            do {
                // Until the flood holds what it may: the total (a request from another host is
                // closed unanswered) or its host's share.
                try await eventually("the flood holds its bytes", timeout: .seconds(30)) {
                    if server.log.contains("([limits] unauthenticated_bytes_per_peer)") { return true }
                    return (try? PlainSocket.get(port: server.port, path: "/healthz", source: "127.0.0.3"))?.status == 0
                }
                let health = try PlainSocket.get(port: server.port, path: "/healthz", source: "127.0.0.3")
                #expect(health.status == 200, "a health check from another host during the flood: \(health.status)")
                try await ConnectionLimitsTests.honestSync(server, row: "during-flood")
                #expect(flood.openedCount >= 256)
                await flood.stop()
            } catch {
                await flood.stop()
                throw error
            }
        }
    }
}
