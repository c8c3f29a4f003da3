import Foundation
import Testing
import TetherServer
import TetherTestSupport

/// Issue 46, finding 6: per-peer limits count the client a trusted proxy names (its
/// `X-Forwarded-For`, or its PROXY protocol v2 header with `proxy_protocol`), and only a
/// trusted proxy's: from any other address both are ignored. Source addresses 127.0.0.x act
/// as hosts; `connections_per_peer` shows whom a connection is counted for.
@Suite struct TrustedProxyTests {
    /// A keep-alive `GET /healthz` with `headers` (each ending in CRLF) on a new connection from
    /// `source`, after `prefix` bytes; the socket (left open) and the status (0: closed unanswered).
    static func request(_ server: ServerProcess, from source: String, prefix: [UInt8] = [], headers: String = "") throws -> (PlainSocket, Int) {
        let socket = try PlainSocket(port: server.port, timeout: 10, sourceAddress: source)
        _ = socket.send(prefix + Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)\r\n".utf8))
        let answer = socket.receive(until: "\r\n\r\n")
        return (socket, Int(answer.split(separator: " ").dropFirst().first ?? "") ?? 0)
    }

    static func forwarded(_ value: String) -> String { "X-Forwarded-For: \(value)\r\n" }

    @Test func aForgedForwardedForFromAnUntrustedPeerChangesNothing() async throws {
        let config = ConnectionLimitsTests.config("connections_per_peer = 2\ntrusted_proxies = [\"127.0.0.2\"]")
        try await withServer(extraConfig: config) { server in
            let first = try Self.request(server, from: "127.0.0.3", headers: Self.forwarded("10.1.1.1"))
            let second = try Self.request(server, from: "127.0.0.3", headers: Self.forwarded("10.1.1.2"))
            #expect(first.1 == 200 && second.1 == 200)
            // A third names yet another client: it is still 127.0.0.3's third connection.
            let third = try Self.request(server, from: "127.0.0.3", headers: Self.forwarded("10.1.1.3"))
            #expect(third.1 == 0)
            #expect(server.log.contains("connection from 127.0.0.3 closed: more than 2 connections"))
            #expect(!server.log.contains("connection from 10.1.1."))
        }
    }

    @Test func aTrustedProxysForwardedForNamesTheClient() async throws {
        let config = ConnectionLimitsTests.config("connections_per_peer = 2\ntrusted_proxies = [\"127.0.0.2\", \"10.9.0.0/16\"]")
        try await withServer(extraConfig: config) { server in
            // Two clients' two connections each through one proxy address: all four served.
            var open: [PlainSocket] = []
            for client in ["192.0.2.1", "192.0.2.1", "192.0.2.2", "203.0.113.9, 192.0.2.2"] {
                let (socket, status) = try Self.request(server, from: "127.0.0.2", headers: Self.forwarded(client))
                #expect(status == 200, "\(client)")
                open.append(socket)
            }
            // The right-most address that is not a trusted proxy is the client: 192.0.2.1's third.
            let third = try Self.request(server, from: "127.0.0.2", headers: Self.forwarded("198.51.100.7, 192.0.2.1, 10.9.3.4"))
            #expect(third.1 == 0)
            #expect(server.log.contains("connection from 192.0.2.1 closed: more than 2 connections"))
            // Once one goes, 192.0.2.1 may connect again.
            open.removeFirst()
            try await eventually("192.0.2.1 served again", timeout: .seconds(10)) {
                let (socket, status) = try Self.request(server, from: "127.0.0.2", headers: Self.forwarded("192.0.2.1"))
                if status == 200 { open.append(socket) }
                return status == 200
            }
        }
    }

    @Test func aWebSocketUpgradeIsCountedForTheClientItsProxyNames() async throws {
        let config = ConnectionLimitsTests.config("connections_per_peer = 1\ntrusted_proxies = [\"127.0.0.2\"]")
        try await withServer(extraConfig: config) { server in
            func upgrade(_ forwarded: String) throws -> (PlainSocket, String) {
                let socket = try PlainSocket(port: server.port, timeout: 10, sourceAddress: "127.0.0.2")
                _ = socket.send("GET /sync HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\(Self.forwarded(forwarded))\r\n")
                return (socket, socket.receive(until: "\r\n\r\n"))
            }
            let first = try upgrade("192.0.2.1")
            #expect(first.1.hasPrefix("HTTP/1.1 101"))
            let other = try upgrade("192.0.2.2")
            #expect(other.1.hasPrefix("HTTP/1.1 101"))
            let second = try upgrade("192.0.2.1")
            try await eventually("192.0.2.1's second connection closed", timeout: .seconds(10)) { second.0.isClosedByPeer }
            #expect(server.log.contains("connection from 192.0.2.1 closed: more than 1 connections"))
            #expect(!first.0.isClosedByPeer && !other.0.isClosedByPeer)
        }
    }

    @Test func aProxyProtocolHeaderNamesTheClient() async throws {
        let config = ConnectionLimitsTests.config("connections_per_peer = 1\ntrusted_proxies = [\"127.0.0.2\"]\nproxy_protocol = true")
        try await withServer(extraConfig: config) { server in
            func header(_ text: String) -> [UInt8] { ProxyHeaderBytes.make(source: text) }
            let a = try Self.request(server, from: "127.0.0.2", prefix: header("192.0.2.7"))
            #expect(a.1 == 200)
            let b = try Self.request(server, from: "127.0.0.2", prefix: header("192.0.2.8"))
            #expect(b.1 == 200)
            // 192.0.2.7's second connection.
            let c = try Self.request(server, from: "127.0.0.2", prefix: header("192.0.2.7"))
            #expect(c.1 == 0)
            #expect(server.log.contains("connection from 192.0.2.7 closed: more than 1 connections"))
            // IPv6 clients count by their /64.
            let d = try Self.request(server, from: "127.0.0.2", prefix: header("2001:db8:1:2::1"))
            #expect(d.1 == 200)
            let e = try Self.request(server, from: "127.0.0.2", prefix: header("2001:db8:1:2::ffff"))
            #expect(e.1 == 0)
            #expect(server.log.contains("connection from 2001:db8:1:2::ffff closed: more than 1 connections"))
            // The proxy's own health check (LOCAL) is served.
            let local = try Self.request(server, from: "127.0.0.2", prefix: ProxyHeaderBytes.local)
            #expect(local.1 == 200)
            // A trusted proxy that sends no header is refused; from another address a header is bad bytes.
            let bare = try Self.request(server, from: "127.0.0.2")
            #expect(bare.1 == 0)
            #expect(server.log.contains("not a PROXY protocol v2 header"))
            let untrusted = try Self.request(server, from: "127.0.0.3", prefix: header("192.0.2.9"))
            #expect(untrusted.1 != 200)
        }
    }
}

/// PROXY protocol v2 headers as a load balancer sends them (TCP, no TLVs).
enum ProxyHeaderBytes {
    static let signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]
    static let local: [UInt8] = signature + [0x20, 0x00, 0x00, 0x00]

    static func make(source: String) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 16)
        let v6 = source.contains(":")
        let length = v6 ? 16 : 4
        _ = source.withCString { inet_pton(v6 ? AF_INET6 : AF_INET, $0, &bytes) }
        let address = Array(bytes.prefix(length))
        let payload = address + address + [0x9C, 0x40, 0x1F, 0x78]
        return signature + [0x21, v6 ? 0x21 : 0x11, 0x00, UInt8(payload.count)] + payload
    }
}
