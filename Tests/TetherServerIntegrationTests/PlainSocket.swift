import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP socket to a loopback port, for tests that behave as no client library
/// would: half-sent headers, partial frames, thousands of idle connections.
final class PlainSocket: @unchecked Sendable {
    let fd: Int32

    /// Connects to `host`:`port` (loopback) from `sourceAddress` (another loopback address, e.g.
    /// `127.0.0.7`: another peer for the server's per-address limits) or the system's choice;
    /// sends and receives time out after `timeout` seconds.
    init(port: Int, timeout: Int = 5, host: String = "127.0.0.1", sourceAddress: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ServerFailure("socket: errno \(errno)") }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        if let sourceAddress {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(sourceAddress)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                let error = errno
                close(fd)
                throw ServerFailure("bind \(sourceAddress): errno \(error)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let error = errno
            close(fd)
            throw ServerFailure("connect: errno \(error)")
        }
    }

    deinit { close(fd) }

    /// Sends everything; false when the peer closed (or the send timed out) first.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 {
                if sent < 0 && errno == EINTR { continue }
                return false
            }
            offset += sent
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads until `marker` (e.g. the end of a response head) or the peer closes.
    func receive(until marker: String) -> String {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: data, as: UTF8.self).contains(marker) {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            data += buffer[0..<count]
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Whether the peer has closed: a read without waiting sees the end (or a reset).
    var isClosedByPeer: Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_DONTWAIT) | Int32(MSG_PEEK))
        if count == 0 { return true }
        if count < 0 { return errno != EAGAIN && errno != EWOULDBLOCK }
        return false
    }

    /// A WebSocket upgrade of `/sync`; true when the server answered 101.
    func upgradeToWebSocket() -> Bool {
        let request = "GET /sync HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        guard send(request) else { return false }
        return receive(until: "\r\n\r\n").hasPrefix("HTTP/1.1 101")
    }

    /// The head of a masked binary WebSocket frame announcing `length` payload bytes.
    static func binaryFrameHead(length: Int) -> [UInt8] {
        var head: [UInt8] = [0x82, 0x80 | 127]
        for shift in stride(from: 56, through: 0, by: -8) { head.append(UInt8((UInt64(length) >> UInt64(shift)) & 0xFF)) }
        return head + [0x11, 0x22, 0x33, 0x44]
    }

    /// `GET path` with `Connection: close`: the status and the body.
    static func get(port: Int, path: String, source: String? = nil, headers: String = "") throws -> (status: Int, body: String) {
        let socket = try PlainSocket(port: port, sourceAddress: source)
        _ = socket.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)Connection: close\r\n\r\n")
        let response = socket.receive(until: "\u{0}")  // until the server closes
        let status = Int(response.split(separator: " ").dropFirst().first ?? "") ?? 0
        let body = response.range(of: "\r\n\r\n").map { String(response[$0.upperBound...]) } ?? ""
        return (status, body)
    }

    /// `POST path` of a JSON body with `Connection: close`: the status, the head and the body.
    static func post(port: Int, path: String, json: String) throws -> (status: Int, head: String, body: String) {
        let socket = try PlainSocket(port: port)
        let body = Array(json.utf8)
        _ = socket.send(
            "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n")
        _ = socket.send(body)
        let response = socket.receive(until: "\u{0}")  // until the server closes
        let status = Int(response.split(separator: " ").dropFirst().first ?? "") ?? 0
        guard let end = response.range(of: "\r\n\r\n") else { return (status, response, "") }
        return (status, String(response[..<end.lowerBound]), String(response[end.upperBound...]))
    }

    /// The resident set size of process `pid`, in bytes.
    static func residentBytes(of pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }
}
