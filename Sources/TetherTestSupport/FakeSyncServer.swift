import Foundation
import Synchronization

/// A misbehaving sync server (for the end-to-end tests and the agent connection's in-process
/// tests): a raw TCP listener on loopback that answers the WebSocket upgrade on any path and then sends whatever the test asks for — random bytes, truncated
/// frames, text frames, an oversize frame, messages out of order, a welcome with another
/// protocol version. Every connection gets the same treatment. Blocking sockets on plain
/// threads (never Swift concurrency's threads), closed by ``stop()``.
package final class FakeSyncServer: Sendable {
    /// What the server sends after the `101 Switching Protocols` answer; then it closes the
    /// connection (`closeAfter`) or keeps it open until the client closes it.
    package struct Behaviour: Sendable {
        package var bytes: @Sendable () -> [UInt8]
        package var closeAfter: Bool
        package var upgrade: Upgrade
        /// With `closeAfter` false: called with each binary message the client sends (its
        /// payload, unmasked); what it returns is written back (nothing when empty).
        package var reply: (@Sendable ([UInt8]) -> [UInt8])?
        /// The `101` answer and `bytes` in one write: with `closeAfter`, the client may read
        /// the answer, the bytes and the end of the stream at once, before it sends anything.
        package var withTheAnswer: Bool

        package init(
            bytes: @escaping @Sendable () -> [UInt8], closeAfter: Bool, upgrade: Upgrade = .answer,
            reply: (@Sendable ([UInt8]) -> [UInt8])? = nil, withTheAnswer: Bool = false
        ) {
            self.bytes = bytes
            self.closeAfter = closeAfter
            self.upgrade = upgrade
            self.reply = reply
            self.withTheAnswer = withTheAnswer
        }
    }

    /// What the server does with the upgrade request.
    package enum Upgrade: Sendable {
        case answer
        /// Never answers: half-closes the connection (FIN) once the request is read and keeps it
        /// open until the client closes it (seed 23097527's server).
        case halfClose
        /// Never answers and keeps the connection open, silent.
        case silence
    }

    private let behaviour: Behaviour
    /// Set once, right after the listener starts (the handler needs `self`).
    private let listener = Mutex<LoopbackListener?>(nil)

    package var port: UInt16 { listener.withLock { $0?.port ?? 0 } }
    package var url: String { "ws://127.0.0.1:\(port)/sync" }
    package var connections: Int { listener.withLock { $0?.connections ?? 0 } }

    package init(_ behaviour: Behaviour) throws {
        self.behaviour = behaviour
        let started = try LoopbackListener { client in self.serve(client) }
        listener.withLock { $0 = started }
    }

    package func stop() { listener.withLock { $0 }?.stop() }

    private func serve(_ client: Int32) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        // The HTTP upgrade request, up to its blank line.
        var request: [UInt8] = []
        while !request.ends(with: Array("\r\n\r\n".utf8)) {
            let n = read(client, &chunk, chunk.count)
            if n <= 0 { return }
            request += chunk[0..<n]
        }
        if behaviour.upgrade != .answer {
            if behaviour.upgrade == .halfClose { shutdown(client, Int32(SHUT_WR)) }
            while read(client, &chunk, chunk.count) > 0 {}
            return
        }
        let text = String(decoding: request, as: UTF8.self)
        guard let keyLine = text.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("sec-websocket-key:") }) else { return }
        let key = keyLine.drop { $0 != ":" }.dropFirst().trimmingCharacters(in: .whitespaces)
        let accept = Data(SHA1.digest(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
        let answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n"
        if behaviour.withTheAnswer {
            guard writeAll(client, Array(answer.utf8) + behaviour.bytes()) else { return }
        } else {
            guard writeAll(client, Array(answer.utf8)) else { return }
            guard writeAll(client, behaviour.bytes()) else { return }
        }
        if behaviour.closeAfter { return }
        guard let reply = behaviour.reply else {
            // Keep the connection until the client closes it (read and drop what it sends).
            while read(client, &chunk, chunk.count) > 0 {}
            return
        }
        var received: [UInt8] = []
        while true {
            while let (payload, used) = Self.clientFrame(in: received) {
                received.removeFirst(used)
                let answer = reply(payload)
                if !answer.isEmpty, !writeAll(client, answer) { return }
            }
            let n = read(client, &chunk, chunk.count)
            if n <= 0 { return }
            received += chunk[0..<n]
        }
    }

    /// The first whole client frame in `bytes` (masked, as a client sends them): its unmasked
    /// payload and the bytes it took; nil until it is all there.
    package static func clientFrame(in bytes: [UInt8]) -> (payload: [UInt8], used: Int)? {
        guard bytes.count >= 2 else { return nil }
        var length = Int(bytes[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[2]) << 8 | Int(bytes[3])
            offset = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = bytes[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        let masked = bytes[1] & 0x80 != 0
        let mask = masked ? Array(bytes[offset..<min(offset + 4, bytes.count)]) : []
        if masked { offset += 4 }
        guard bytes.count >= offset + length else { return nil }
        let payload = bytes[offset..<(offset + length)].enumerated().map { i, byte in masked ? byte ^ mask[i % 4] : byte }
        return (payload, offset + length)
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool { LoopbackPort.writeAll(fd, bytes) }

    // MARK: Frames and messages

    /// An unmasked server frame (FIN set) with `opcode` 0x1 text or 0x2 binary.
    package static func frame(_ opcode: UInt8, _ payload: [UInt8], announcedLength: Int? = nil) -> [UInt8] {
        let length = announcedLength ?? payload.count
        var bytes: [UInt8] = [0x80 | opcode]
        if length < 126 {
            bytes.append(UInt8(length))
        } else if length <= 0xFFFF {
            bytes += [126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            bytes.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((length >> shift) & 0xFF)) }
        }
        return bytes + payload
    }

    /// A `welcome` message (type 0x81, varint protocol version, software string).
    package static func welcome(protocolVersion: UInt8, software: String = "fake-server") -> [UInt8] {
        let software = Array(software.utf8)
        precondition(software.count < 128, "one-byte varint length")
        return [0x81, protocolVersion, UInt8(software.count)] + software
    }

    /// A `pong` message (type 0x86, nonce 5): never valid before the welcome.
    package static let pong: [UInt8] = [0x86, 0x05]
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix)
    }
}
