import Foundation
import Glibc
import TetherTestSupport

/// A plain HTTP/1.1 GET (`Connection: close`) on loopback, as a Prometheus scraper or a load balancer's health
/// check would send it: status code and body.
enum HTTPGet {
    struct Response: Sendable {
        var status: Int
        var body: String
    }

    static func get(port: UInt16, path: String) throws -> Response {
        let answer = try exchange(port: port, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return Response(status: answer.status, body: answer.body)
    }

    /// Sends `request` (a whole HTTP/1.1 request, `Connection: close`) to 127.0.0.1:`port` and
    /// reads the answer: its status, its head and its body.
    static func exchange(port: UInt16, _ request: String) throws -> (status: Int, head: String, body: String) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket failed") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TestSupportError("connect to 127.0.0.1:\(port) failed: \(String(cString: strerror(errno)))") }
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            answer += chunk[0..<n]
            if Self.isComplete(answer) { break }
        }
        let text = String(decoding: answer, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n"), let status = Int(text.split(separator: " ").dropFirst().first ?? "") else {
            throw TestSupportError("no HTTP answer from 127.0.0.1:\(port): \(text.prefix(200))")
        }
        return (status, String(text[..<split.lowerBound]), String(text[split.upperBound...]))
    }
}

extension HTTPGet {
    /// Whether `answer` holds the whole head and a body of its Content-Length.
    static func isComplete(_ answer: [UInt8]) -> Bool {
        let text = String(decoding: answer, as: UTF8.self)
        guard let head = text.range(of: "\r\n\r\n") else { return false }
        let length = text[..<head.lowerBound].split(separator: "\r\n").lazy
            .compactMap { line -> Int? in
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                return Int(parts[1].trimmingCharacters(in: .whitespaces))
            }.first
        guard let length else { return false }
        return text[head.upperBound...].utf8.count >= length
    }
}

/// Samples of a Prometheus text exposition, by series as written (`name{labels}`).
struct Exposition {
    let samples: [String: Double]

    init(_ text: String) {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        self.samples = samples
    }

    subscript(_ series: String) -> Double? { samples[series] }

    /// The sum of every series of metric `name`.
    func total(_ name: String) -> Double {
        samples.filter { $0.key == name || $0.key.hasPrefix(name + "{") }.values.reduce(0, +)
    }
}
