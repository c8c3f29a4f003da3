import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import TetherProtocol
import TetherSyncClient
import TetherTestSupport

/// Revocation: an enrolled device with a session bound on every instance (one connection each);
/// `admin device revoke NAME` through the first instance's admin API
/// (`POST /admin/identities/NAME/revoke`); the time from sending that request until every
/// session received its 203 (max over instances). Floor: a protocol ping round trip on the same
/// connections (median of ``pings`` per connection, max over instances). Median of
/// ``BenchOptions/revocationRuns`` runs, a new device each.
extension EnrollmentBench {
    static let pings = 20

    func revocationFigure() async throws -> BenchFigure {
        let key = try await createKey(store: 0, note: "tether-bench revocation")
        let adminToken = try String(contentsOfFile: cluster.dir.appending("admin.token"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        var ended: [Double] = [], pings: [Double] = [], answered: [Double] = []
        for run in 0..<options.revocationRuns {
            let device = try await enroll(key: key, instance: run % instances, name: "bench-revoke-\(run)")
            let outcome = try await revokeOnce(device, adminToken: adminToken)
            ended.append(outcome.ended)
            pings.append(outcome.ping)
            answered.append(outcome.answered)
        }
        let value = Statistics.median(ended)!
        let floor = Statistics.median(pings)!
        return BenchFigure(
            name: "revocation",
            workload: "an enrolled device bound on each of \(instances) instance\(instances == 1 ? "" : "s"); admin device revoke (admin API of the first instance) until every session got its 203; \(options.revocationRuns) runs",
            value: value * 1000, unit: "ms until the last session ended", runs: ended.map { $0 * 1000 },
            seconds: value, floorSeconds: floor,
            target: "≤ 1 s on every instance", met: value <= 1,
            extra: [
                "floor_ping_ms": floor * 1000, "admin_answer_ms": Statistics.median(answered)! * 1000,
                "worst_run_ms": (ended.max() ?? 0) * 1000,
            ],
            notes: ["timed from sending the admin request; floor = a protocol ping round trip on the same connections (median of \(Self.pings), max over instances)"])
    }

    struct Revocation: Sendable {
        /// Seconds from the admin request until the last session's 203.
        var ended: Double
        /// The ping round trip (seconds).
        var ping: Double
        /// Seconds until the admin API answered.
        var answered: Double
    }

    func revokeOnce(_ device: EnrollmentResponse, adminToken: String) async throws -> Revocation {
        let watch = RevocationWatch()
        let logger = quietLogger
        let urls = (0..<instances).map { cluster.url(instance: $0) }
        let partition = "store-\(device.tags["store"] ?? "0")"
        let clock = ContinuousClock()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            for (instance, url) in urls.enumerated() {
                group.addTask {
                    await Self.holdSession(instance, url: url, credential: device.credential, partition: partition, watch: watch, logger: logger)
                }
            }
            defer { group.cancelAll() }
            do {
                try await eventually("\(urls.count) sessions of \(device.name) ready", timeout: .seconds(60)) {
                    if let problem = watch.problems.first { throw TestSupportError(problem) }
                    return watch.readyConnections.count == urls.count
                }
                var worstPing = 0.0
                for connection in watch.readyConnections {
                    var samples: [Double] = []
                    for _ in 0..<Self.pings {
                        let started = clock.now
                        try await connection.ping()
                        samples.append(started.duration(to: clock.now).seconds)
                    }
                    worstPing = max(worstPing, Statistics.median(samples)!)
                }
                let started = clock.now
                try await revoke(device.name, adminToken: adminToken)
                let answered = started.duration(to: clock.now).seconds
                let endings = try await eventually("every session of \(device.name) ended with 203", timeout: .seconds(30), pollInterval: .milliseconds(2)) {
                    () throws -> [ContinuousClock.Instant]? in
                    if let problem = watch.problems.first { throw TestSupportError(problem) }
                    let endings = watch.endings
                    return endings.count == urls.count ? endings : nil
                }
                let last = endings.map { started.duration(to: $0).seconds }.max() ?? 0
                try await group.waitForAll()
                return Revocation(ended: last, ping: worstPing, answered: answered)
            } catch {
                for connection in watch.readyConnections { await connection.close() }
                throw error
            }
        }
    }

    /// One session of the device on one instance: bound, then waits for its end, which must be a 203.
    static func holdSession(_ instance: Int, url: String, credential: String, partition: String, watch: RevocationWatch, logger: Logger) async {
        do {
            try await SyncConnection.run(SyncClientConfiguration(url: url, software: software), logger: logger) { connection in
                let session = try await connection.bind(BindRequest(session: 1, partition: partition, token: credential, identity: nil))
                for await event in session.events {
                    if event.makesSessionReady { watch.ready(instance, connection) }
                    switch event {
                    case .bound, .state, .download, .healed, .compensatingWrites, .subscriptionChunk: continue
                    case .error(let error) where error.code == .badUserAuthentication, .disconnected(.some(let error)) where error.code == .badUserAuthentication:
                        watch.ended(instance)
                        return
                    case .error(let error), .disconnected(.some(let error)):
                        watch.failed("instance \(instance): the session ended with \(error), not 203")
                        return
                    case .unbound, .disconnected(.none):
                        watch.failed("instance \(instance): the session ended without 203")
                        return
                    }
                }
            }
        } catch {
            watch.failed("instance \(instance): \(error)")
        }
    }

    /// `admin device revoke NAME` through the first instance's admin API.
    func revoke(_ name: String, adminToken: String) async throws {
        var request = HTTPClientRequest(url: "\(cluster.adminURL(instance: 0))/admin/identities/\(name)/revoke")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(adminToken)")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else {
            throw TestSupportError("admin device revoke \(name) answered \(response.status): \(String(buffer: body))")
        }
    }
}

/// The revocation figure's sessions: each one's connection once ready, and when it got its 203.
final class RevocationWatch: Sendable {
    private struct State {
        var connections: [Int: SyncConnection] = [:]
        var endings: [Int: ContinuousClock.Instant] = [:]
        var problems: [String] = []
    }

    private let state = Mutex(State())

    func ready(_ instance: Int, _ connection: SyncConnection) { state.withLock { $0.connections[instance] = connection } }
    func ended(_ instance: Int) {
        let now = ContinuousClock.now
        state.withLock { $0.endings[instance] = now }
    }
    func failed(_ problem: String) { state.withLock { $0.problems.append(problem) } }

    var readyConnections: [SyncConnection] { state.withLock { Array($0.connections.values) } }
    var endings: [ContinuousClock.Instant] { state.withLock { Array($0.endings.values) } }
    var problems: [String] { state.withLock { $0.problems } }
}
