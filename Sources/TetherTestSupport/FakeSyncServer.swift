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

    package let port: UInt16
    private let listener: Int32
    private let behaviour: Behaviour
    private let state = Mutex(State())

    private struct State {
        var connections = 0
        var stopped = false
        var clients: [Int32] = []
    }

    package var url: String { "ws://127.0.0.1:\(port)/sync" }
    package var connections: Int { state.withLock { $0.connections } }

    package init(_ behaviour: Behaviour) throws {
        self.behaviour = behaviour
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw TestSupportError("bind/listen: \(String(cString: strerror(errno)))")
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let server = self
        Thread.detachNewThread { server.acceptLoop() }
    }

    package func stop() {
        let clients = state.withLock { state -> [Int32] in
            state.stopped = true
            return state.clients
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for client in clients { shutdown(client, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 { return }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let stopped = state.withLock { state -> Bool in
                if !state.stopped {
                    state.connections += 1
                    state.clients.append(client)
                }
                return state.stopped
            }
            if stopped {
                close(client)
                return
            }
            let server = self
            Thread.detachNewThread { server.serve(client) }
        }
    }

    private func serve(_ client: Int32) {
        defer {
            state.withLock { $0.clients.removeAll { $0 == client } }
            close(client)
        }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // The HTTP upgrade request, up to its blank line.
        var request: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
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

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

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
