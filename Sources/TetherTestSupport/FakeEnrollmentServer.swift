import Foundation
import Synchronization
import TetherProtocol

/// A stand-in for a server's `/enroll` (for the agent's in-process tests and the end-to-end
/// tests, until the real one is there): a plain HTTP/1.1 listener on loopback port 0 that
/// speaks the enrollment contract of `Sources/TetherProtocol/Enrollment/` — an
/// ``EnrollmentRequest`` in, an ``EnrollmentResponse`` (201 new device, 200 the same device
/// enrolled again with the same key and given a fresh credential) or an ``EnrollmentFailure``
/// with its code's status out. Keys and devices are kept in memory (``Contract``); a test can
/// put answers in front (``script(_:)``). Blocking sockets on plain threads, closed by
/// ``stop()``. Secrets it makes are random; the credentials it gave are readable for checks.
package final class FakeEnrollmentServer: Sendable {
    /// An answer a test forces (the next requests get these, in order, before the contract).
    package struct Answer: Sendable {
        package var status: Int
        package var body: String
        package var headers: [String: String]

        package init(status: Int, body: String, headers: [String: String] = [:]) {
            self.status = status
            self.body = body
            self.headers = headers
        }

        /// The contract's refusal with `code`.
        package static func refusal(_ code: EnrollmentErrorCode, retryAfter: Int? = nil) -> Answer {
            let failure = EnrollmentFailure(code, "refused by the fake server: \(code.rawValue)")
            let body = (try? JSONEncoder().encode(failure)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"  // a plain struct: encodes
            return Answer(status: code.httpStatus, body: body, headers: retryAfter.map { ["Retry-After": "\($0)"] } ?? [:])
        }
    }

    /// Set once, right after the listener starts (the handler needs `self`).
    private let listener = Mutex<LoopbackListener?>(nil)
    let state = Mutex(State())

    struct State {
        var contract = Contract()
        var scripted: [Answer] = []
        /// Every request's path and body, in order.
        var requests: [(path: String, body: [UInt8])] = []
    }

    /// `http://127.0.0.1:<port>`.
    package var baseURL: String { "http://127.0.0.1:\(port)" }
    /// A sync URL whose enrollment URL is this server's `/enroll`.
    package var syncURL: String { "ws://127.0.0.1:\(port)/sync" }

    package var port: UInt16 { listener.withLock { $0?.port ?? 0 } }

    package init() throws {
        let started = try LoopbackListener { client in self.serve(client) }
        listener.withLock { $0 = started }
    }

    /// Adds an enrollment key (``Contract/Key``) and returns its text.
    @discardableResult
    package func addKey(tags: [String: String] = [:], uses: Int? = nil, state keyState: Contract.KeyState = .active) -> String {
        state.withLock { $0.contract.addKey(tags: tags, uses: uses, state: keyState) }
    }

    /// The next requests to `/enroll` get `answers`, in order, whatever they ask.
    package func script(_ answers: [Answer]) { state.withLock { $0.scripted += answers } }

    /// The devices enrolled, by id.
    package var devices: [String: Contract.Device] { state.withLock { $0.contract.devices } }
    /// How many requests to `/enroll` came (scripted answers included).
    package var requestCount: Int { state.withLock { $0.requests.filter { $0.path == "/enroll" }.count } }
    /// The requests' bodies decoded (those that decode).
    package var requests: [EnrollmentRequest] {
        state.withLock { $0.requests.compactMap { try? JSONDecoder().decode(EnrollmentRequest.self, from: Data($0.body)) } }  // an undecodable one is left out
    }

    package func stop() { listener.withLock { $0 }?.stop() }

    /// One request (`Connection: close`): head, body of `Content-Length` bytes, answer.
    private func serve(_ client: Int32) {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let separator = Array("\r\n\r\n".utf8)
        var headEnd: Int? = nil
        while headEnd == nil {
            let n = read(client, &chunk, chunk.count)
            if n <= 0 { return }
            received += chunk[0..<n]
            headEnd = received.firstRange(of: separator)?.upperBound
            if headEnd == nil && received.count > 65_536 { return }
        }
        let head = String(decoding: received[..<headEnd!], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        let requestLine = lines.first?.split(separator: " ") ?? []
        let lengthLine = lines.dropFirst().first { line in line.lowercased().hasPrefix("content-length:") }
        let length = lengthLine.flatMap { line in Int(line.drop { $0 != ":" }.dropFirst().trimmingCharacters(in: .whitespaces)) } ?? 0
        // Read at most a little over the limit: a larger body is refused unread.
        let wanted = min(length, EnrollmentLimits.maxRequestBytes + 1)
        while received.count - headEnd! < wanted {
            let n = read(client, &chunk, chunk.count)
            if n <= 0 { break }
            received += chunk[0..<n]
        }
        let body = Array(received[headEnd!...].prefix(wanted))
        let method = requestLine.first.map(String.init) ?? ""
        let path = requestLine.dropFirst().first.map(String.init) ?? ""
        let answer = state.withLock { state -> Answer in
            state.requests.append((path, body))
            if path == "/enroll", !state.scripted.isEmpty { return state.scripted.removeFirst() }
            guard method == "POST", path == "/enroll" else { return Answer(status: 404, body: "not found") }
            if length > EnrollmentLimits.maxRequestBytes { return .refusal(.tooLarge) }
            return state.contract.enroll(body)
        }
        var text = "HTTP/1.1 \(answer.status) \(answer.status < 300 ? "OK" : "Refused")\r\nContent-Length: \(answer.body.utf8.count)\r\n"
        text += "Content-Type: application/json\r\nConnection: close\r\n"
        for (name, value) in answer.headers { text += "\(name): \(value)\r\n" }
        text += "\r\n" + answer.body
        _ = LoopbackPort.writeAll(client, Array(text.utf8))  // a client gone before the answer: nothing to do
    }
}
