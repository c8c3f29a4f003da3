import Foundation
import Testing
import TetherProtocol
import TetherServer
import TetherTestSupport

/// `[limits]` against a real server and real sockets: what unauthenticated connections may
/// cost in memory and time, while an honest device keeps syncing.
@Suite struct ConnectionLimitsTests {
    /// Limits other than the one under test are set out of the way.
    static func config(_ limits: String) -> String {
        "public_metrics = true\n[limits]\n\(limits)\n"
    }

    /// An honest device binds, writes a row and sees it integrated.
    static func honestSync(_ server: ServerProcess, row: String) async throws {
        try await withConnection(server) { connection in
            let device = TestDevice()
            try await device.bind(on: connection)
            device.write(.insert("orders", .text(row), ["customer": .text("Ada"), "total": .real(1), "note": .null]))
            try await device.upload()
            try await device.syncUntilCaughtUp()
            #expect(device.state.rows[RowRef(table: "orders", key: .text(row))] != nil)
        }
    }

    static func metric(_ server: ServerProcess, _ line: String) async throws -> Double {
        let text = try PlainSocket.get(port: server.port, path: "/metrics").body
        guard let found = text.split(separator: "\n").first(where: { $0.hasPrefix(line + " ") }) else { return 0 }
        return Double(found.split(separator: " ").last ?? "") ?? 0
    }

    @Test(.timeLimit(.minutes(5)))
    func aThousandPartialMessagesBeforeAuthenticationKeepMemoryBounded() async throws {
        let limits = "connections_per_peer = 5000\nheader_timeout_seconds = 600\nauth_timeout_seconds = 600"
        try await withServer(extraConfig: Self.config(limits)) { server in
            try await Self.honestSync(server, row: "before")
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
            #expect(peak - idle < 64 << 20, "server RSS grew from \(idle >> 20) MiB to \(peak >> 20) MiB")
            _ = try await eventually("every over-budget connection closed", timeout: .seconds(30)) {
                sockets.allSatisfy(\.isClosedByPeer) ? true : nil
            }
            // Each by its own budget, or by the budget of all once many hold bytes at once.
            let limited = try await Self.metric(server, #"tether_server_connections_limited_total{limit="unauthenticated_bytes"}"#)
                + Self.metric(server, #"tether_server_connections_limited_total{limit="unauthenticated_bytes_total"}"#)
            #expect(limited >= 1000)
            #expect(server.log.contains("([limits] unauthenticated_bytes"))
            try await Self.honestSync(server, row: "after")
        }
    }

    @Test(.timeLimit(.minutes(5)))
    func aThousandSlowHeadersAreClosedWhileAnHonestDeviceSyncs() async throws {
        let limits = "connections_per_peer = 5000\nheader_timeout_seconds = 3"
        try await withServer(extraConfig: Self.config(limits)) { server in
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
                group.addTask { try await Self.honestSync(server, row: "during") }
                group.addTask {
                    _ = try await eventually("every slow-header connection closed", timeout: .seconds(30)) {
                        all.allSatisfy(\.isClosedByPeer) ? true : nil
                    }
                }
                try await group.waitForAll()
            }
            let took = ContinuousClock.now - opened
            #expect(took < .seconds(20), "closed after \(took)")
            #expect(try await Self.metric(server, #"tether_server_connections_limited_total{limit="header_timeout_seconds"}"#) >= 1000)
        }
    }

    @Test func anUpgradedConnectionThatNeverBindsIsClosed() async throws {
        try await withServer(extraConfig: Self.config("auth_timeout_seconds = 2")) { server in
            let socket = try PlainSocket(port: server.port)
            #expect(socket.upgradeToWebSocket())
            _ = try await eventually("closed after auth_timeout_seconds", timeout: .seconds(15)) { socket.isClosedByPeer ? true : nil }
            #expect(server.log.contains("([limits] auth_timeout_seconds)"))
            // A device that binds in time is not closed.
            try await Self.honestSync(server, row: "bound")
        }
    }

    @Test func connectionsPastThePerPeerLimitAreRefused() async throws {
        try await withServer(extraConfig: Self.config("connections_per_peer = 3")) { server in
            // Four at once: connections are accepted on several threads, so any one of them may be the fourth.
            var held = try (0..<4).map { _ in try PlainSocket(port: server.port) }
            _ = try await eventually("one connection refused", timeout: .seconds(10)) { held.contains(where: \.isClosedByPeer) ? true : nil }
            #expect(held.filter(\.isClosedByPeer).count == 1)
            #expect(server.log.contains("([limits] connections_per_peer)"))
            // Once they go, connections are admitted again.
            held.removeAll()
            _ = try await eventually("a new connection is served", timeout: .seconds(10)) {
                ((try? PlainSocket.get(port: server.port, path: "/healthz"))?.status == 200) ? true : nil
            }
        }
    }

    @Test func anAdminRequestWithTheTokenMaySendALargeBodyAndOneWithoutMayNot() async throws {
        try await withServer(extraConfig: Self.config("")) { server in
            let padding = String(repeating: "x", count: 256 * 1024)
            let body = #"{"user": "pos-17", "pattern": "store-99", "access": "read", "padding": "\#(padding)"}"#
            func post(token: String?) throws -> String {
                let socket = try PlainSocket(port: server.port, timeout: 15)
                let authorization = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
                _ = socket.send("POST /admin/grants HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\(authorization)Content-Length: \(body.utf8.count)\r\n\r\n")
                _ = socket.send(body)
                return socket.receive(until: "\r\n\r\n")
            }
            let accepted = try post(token: ServerProcess.adminToken)
            #expect(accepted.hasPrefix("HTTP/1.1 200"), "\(accepted.prefix(200))")
            let refused = try post(token: nil)
            #expect(!refused.hasPrefix("HTTP/1.1 200"), "\(refused.prefix(200))")
        }
    }
}
