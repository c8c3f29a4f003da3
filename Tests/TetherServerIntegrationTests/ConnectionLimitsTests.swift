import Foundation
import Testing
import TetherProtocol
import TetherServer
import TetherTestSupport

/// `[limits]` against a real server and real sockets: timeouts, the per-address count and the
/// admin token read from a request's head (the floods of 1,000 connections are in
/// ``ConnectionFloodTests``).
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

    @Test func anUpgradedConnectionThatNeverBindsIsClosed() async throws {
        // 5 s: the honest device below must upgrade and bind within it on a loaded machine
        // (2 s was not always enough at load 10).
        try await withServer(extraConfig: Self.config("auth_timeout_seconds = 5")) { server in
            let socket = try PlainSocket(port: server.port)
            #expect(socket.upgradeToWebSocket())
            _ = try await eventually("closed after auth_timeout_seconds", timeout: .seconds(20)) { socket.isClosedByPeer ? true : nil }
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

    @Test func sighupAppliesNewLimits() async throws {
        try await withServer(extraConfig: Self.config("connections_per_peer = 100")) { server in
            let held = try (0..<2).map { _ in try PlainSocket(port: server.port) }
            let config = try String(contentsOfFile: server.configPath, encoding: .utf8)
            try config.replacingOccurrences(of: "connections_per_peer = 100", with: "connections_per_peer = 2")
                .write(toFile: server.configPath, atomically: true, encoding: .utf8)
            server.signal(SIGHUP)
            _ = try await eventually("the reload applied", timeout: .seconds(15)) {
                server.log.contains("[limits] reloaded") ? true : nil
            }
            let third = try PlainSocket(port: server.port)
            _ = try await eventually("a third connection refused", timeout: .seconds(10)) { third.isClosedByPeer ? true : nil }
            #expect(held.filter(\.isClosedByPeer).isEmpty)
        }
    }

    @Test func anAdminRequestWithTheTokenMaySendALargeBodyAndOneWithoutMayNot() async throws {
        try await withServer(extraConfig: Self.config("")) { server in
            let padding = String(repeating: "x", count: 256 * 1024)
            let body = #"{"user": "pos-17", "pattern": "store-99", "access": "read", "padding": "\#(padding)"}"#
            func post(token: String?) throws -> String {
                let socket = try PlainSocket(port: server.adminPort, timeout: 15)
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

    /// Issue 46: a request that is not an admin's may carry a small body only; a larger one
    /// declared is answered 413 without a byte of it read, and the connection closed.
    @Test func aLargeBodyBeforeAuthenticationIsRefusedAtItsHead() async throws {
        try await withServer(extraConfig: Self.config("")) { server in
            let socket = try PlainSocket(port: server.port, timeout: 15)
            #expect(socket.send("POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 65000\r\n\r\n"))
            let answer = socket.receive(until: "\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer.prefix(200))")
            try await eventually("closed after the 413", timeout: .seconds(10)) { socket.isClosedByPeer }
            #expect(server.log.contains("([limits] unauthenticated_body_bytes)"))
            // A small body is read as before.
            let small = try PlainSocket(port: server.port, timeout: 15)
            #expect(small.send("POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 200\r\n\r\n" + String(repeating: "x", count: 200)))
            #expect(!small.receive(until: "\r\n\r\n").hasPrefix("HTTP/1.1 413"))
        }
    }
}
