import Foundation
import Testing
import TetherProtocol
import TetherServer
import TetherTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The `/sync` WebSocket as the server's own channel handler speaks it (issue 50: no task per
/// idle connection), against a real server and a socket that frames by hand: the upgrade of
/// `/sync` only, pings, the close handshake either way, bad frames, and a device whose end
/// went away without a close (half-closed, then gone) releasing its connection.
@Suite struct SyncSocketTests {
    @Test func onlySyncUpgrades() async throws {
        try await withServer { server in
            let other = try PlainSocket(port: server.port)
            _ = other.send(
                "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            #expect(other.receive(until: "\r\n\r\n").hasPrefix("HTTP/1.1 400"))
            let sync = try PlainSocket(port: server.port)
            #expect(sync.upgradeToWebSocket())
            // The listener still answers plain requests.
            #expect(try PlainSocket.get(port: server.port, path: "/healthz").status == 200)
        }
    }

    @Test func aPingIsAnsweredWithItsPayload() async throws {
        try await withServer { server in
            let socket = try PlainSocket(port: server.port)
            #expect(socket.upgradeToWebSocket())
            #expect(socket.send(PlainSocket.maskedFrame(opcode: 0x9, payload: [1, 2, 3, 4, 5])))
            let pong = try #require(socket.receiveFrame())
            #expect(pong.opcode == 0xA && pong.payload == [1, 2, 3, 4, 5])
        }
    }

    @Test func aDevicesCloseIsAnsweredAndTheConnectionEnds() async throws {
        try await withServer { server in
            let socket = try PlainSocket(port: server.port)
            #expect(socket.upgradeToWebSocket())
            #expect(socket.send(PlainSocket.maskedFrame(opcode: 0x8, payload: [0x03, 0xE8])))
            let close = try #require(socket.receiveFrame())
            #expect(close.opcode == 0x8 && close.payload == [0x03, 0xE8])
            _ = try await eventually("the server closed the connection", timeout: .seconds(10)) { socket.isClosedByPeer ? true : nil }
        }
    }

    @Test func aFrameWithReservedBitsOrOpcodeIsAProtocolError() async throws {
        try await withServer { server in
            for (first, what) in [(UInt8(0xC2), "RSV1 on a binary frame"), (0x83, "reserved opcode 3")] {
                let socket = try PlainSocket(port: server.port)
                #expect(socket.upgradeToWebSocket())
                var frame = PlainSocket.maskedFrame(opcode: 0x2, payload: [0x01])
                frame[0] = first
                #expect(socket.send(frame))
                let close = try #require(socket.receiveFrame(), "\(what)")
                #expect(close.opcode == 0x8 && close.payload.prefix(2) == [0x03, 0xEA], "\(what): 1002")
            }
        }
    }

    @Test func aDeviceThatGoesAwayWithoutACloseIsReleased() async throws {
        try await withServer(extraConfig: "public_metrics = true\n") { server in
            let socket = try PlainSocket(port: server.port)
            #expect(socket.upgradeToWebSocket())
            // Bound, so that no [limits] timer closes it: only its going away can.
            #expect(socket.send(PlainSocket.maskedFrame(opcode: 0x2, payload: ClientMessage.hello(Hello(software: "sync-socket-test")).encoded())))
            #expect(socket.send(PlainSocket.maskedFrame(opcode: 0x2, payload: ClientMessage.bind(TestDevice().bindRequest).encoded())))
            var bound = false
            while !bound, let frame = socket.receiveFrame() {
                if frame.opcode == 0x2, case .bound = try ServerMessage.decode(frame.payload) { bound = true }
            }
            #expect(bound)
            _ = try await eventually("the connection counted", timeout: .seconds(20)) {
                try await ConnectionLimitsTests.metric(server, "tether_server_connected_devices") == 1 ? true : nil
            }
            // Its end half-closed (what a killed process's socket looks like before the reset).
            shutdown(socket.fd, Int32(SHUT_WR))
            #expect(socket.readsToTheEnd(), "the server closed the connection (its state messages read first)")
            _ = try await eventually("the connection no longer counted", timeout: .seconds(20)) {
                try await ConnectionLimitsTests.metric(server, "tether_server_connected_devices") == 0 ? true : nil
            }
        }
    }
}

extension PlainSocket {
    /// A masked, final client frame of `opcode` carrying `payload` (under 64 KiB).
    static func maskedFrame(opcode: UInt8, payload: [UInt8]) -> [UInt8] {
        precondition(payload.count < 1 << 16)
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        let length: [UInt8] =
            payload.count < 126 ? [0x80 | UInt8(payload.count)] : [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        return [0x80 | opcode] + length + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// The next frame the server sent (unmasked, as a server's are); nil when the connection
    /// closed or nothing came within the socket's timeout.
    func receiveFrame() -> (opcode: UInt8, payload: [UInt8])? {
        guard let head = receive(count: 2) else { return nil }
        var length = Int(head[1] & 0x7F)
        if length == 126 {
            guard let extended = receive(count: 2) else { return nil }
            length = Int(extended[0]) << 8 | Int(extended[1])
        } else if length == 127 {
            guard let extended = receive(count: 8) else { return nil }
            length = extended.reduce(0) { $0 << 8 | Int($1) }
        }
        guard let payload = receive(count: length) else { return nil }
        return (head[0] & 0x0F, payload)
    }

    /// Reads whatever comes until the server closes the connection: true when it did, false
    /// when a read timed out first.
    func readsToTheEnd() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let read = recv(fd, &buffer, buffer.count, 0)
            if read < 0 && errno == EINTR { continue }
            if read == 0 { return true }
            if read < 0 { return errno == ECONNRESET }
        }
    }

    /// Exactly `count` bytes; nil when the peer closed or the read timed out first.
    private func receive(count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let read = bytes[offset...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else { return nil }
            offset += read
        }
        return bytes
    }
}
