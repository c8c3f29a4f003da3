import Foundation
import TetherTestSupport
import Synchronization

/// An operator using the admin API while a flood goes on (``HostileFloodTests``): `GET
/// /admin/status` with the admin token every ``interval``, one request at a time, each from
/// ``sourceAddress`` on a connection of its own. Each request runs on a thread of its own (the
/// socket blocks, up to ``timeoutSeconds``), so a slow answer holds none of Swift concurrency's
/// threads, which the honest devices need.
struct AdminOperator: Sendable {
    /// The admin base URL (``ServerProcess/adminURL``).
    var url: String
    var token: String
    var sourceAddress: String
    var interval: Duration = .milliseconds(200)
    var timeoutSeconds = 5
    var maxCalls = 1000

    struct Call: Sendable {
        var seconds: Double
        /// The HTTP status, 0 when there was no answer.
        var status: Int
        var failure: String?
    }

    /// Calls until `stop` says so (or ``maxCalls`` were made).
    func run(until stop: StopFlag) async -> [Call] {
        let clock = ContinuousClock()
        var calls: [Call] = []
        while !stop.isSet && calls.count < maxCalls {
            let started = clock.now
            let (url, token, source, timeout) = (url, token, sourceAddress, timeoutSeconds)
            calls.append(await BlockingCall.run { Self.status(url: url, token: token, sourceAddress: source, timeout: timeout) })
            let next = started.advanced(by: interval)
            if next > clock.now { try? await Task.sleep(until: next, clock: .continuous) }
        }
        return calls
    }

    /// One `GET /admin/status`: how long until the head of the answer arrived, and its status.
    static func status(url: String, token: String, sourceAddress: String, timeout: Int) -> Call {
        let clock = ContinuousClock()
        let started = clock.now
        func seconds() -> Double {
            let elapsed = started.duration(to: clock.now).components
            return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        }
        guard let components = URLComponents(string: url), let host = components.host, let port = components.port else {
            return Call(seconds: 0, status: 0, failure: "not an admin URL: \(url)")
        }
        do {
            let socket = try PlainSocket(port: port, timeout: timeout, host: host, sourceAddress: sourceAddress)
            guard socket.send("GET /admin/status HTTP/1.1\r\nHost: \(host)\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n") else {
                return Call(seconds: seconds(), status: 0, failure: "the request could not be sent (closed by the server)")
            }
            let head = socket.receive(until: "\r\n\r\n")
            let status = head.hasPrefix("HTTP/1.1 ") ? Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0 : 0
            let failure = status == 200 ? nil : head.isEmpty ? "closed or timed out without an answer" : "answered \(head.prefix(40))"
            return Call(seconds: seconds(), status: status, failure: failure)
        } catch {
            return Call(seconds: seconds(), status: 0, failure: "\(error)")
        }
    }
}

/// Set once, read by the loops that run until it is.
final class StopFlag: Sendable {
    private let state = Mutex(false)
    var isSet: Bool { state.withLock { $0 } }
    func set() { state.withLock { $0 = true } }
}
