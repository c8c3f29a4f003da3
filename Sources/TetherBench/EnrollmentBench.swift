import Foundation
import Logging
import TetherProtocol
import TetherSyncClient
import TetherTestSupport

/// Enrollment (issue 48): what a fleet enrolling itself, binding with tag-template grants and
/// being revoked costs the server. Three figures, each against a floor measured in the same run:
/// - **enrollment CPU**: ``BenchOptions/enrollments`` devices (distinct random device ids)
///   enrolled from one reusable key through `POST /enroll`, ``concurrency`` at a time, spread
///   over the instances; the server processes' CPU (every instance, not PostgreSQL's backends)
///   per enrollment. Floor: as many `POST`s of the same body, by the same client at the same
///   concurrency, to a path the router answers 404 without storage.
/// - **bind with a tag template** (``bindFigure(_:)``).
/// - **revocation** (``revocationFigure(_:)``).
struct EnrollmentBench {
    let options: BenchOptions
    let cluster: Cluster
    /// Requests (and binds) in flight at once.
    static let concurrency = 50
    /// Stores of the bind figure's devices: one key (`store=K`) and one grant each.
    static let stores = 10
    static let software = "tether-bench"

    var instances: Int { cluster.ports.count }
    var quietLogger: Logger {
        var logger = Logger(label: "tether-bench.enrollment")
        logger.logLevel = .critical
        return logger
    }

    /// `(a, b)` when both are there.
    static func both(_ a: Double?, _ b: Double?) -> (Double, Double)? { a.flatMap { a in b.map { (a, $0) } } }

    /// The server processes' CPU seconds, summed over every instance.
    var serverCPU: Double {
        cluster.serverProcesses.compactMap { $0 }.map { ProcessProbe(processID: $0.processID).cpuSeconds ?? 0 }.reduce(0, +)
    }

    func run() async throws -> [BenchFigure] {
        for store in 0..<Self.stores {
            try await cluster.admin(["grant", "tag:store=\(store)", "store-{tag:store}", "readwrite"])
        }
        return [try await enrollmentFigure(), try await bindFigure(), try await revocationFigure()]
    }

    // MARK: Enrollment CPU

    func enrollmentFigure() async throws -> BenchFigure {
        let count = options.enrollments
        let key = try await createKey(store: 0, note: "tether-bench enrollment")
        let body = try Self.requestBody(key: key, deviceID: Self.randomDeviceID())

        // The floor first: the same body, client and concurrency, answered 404 by the router.
        let floor = try await measure(count) { index in
            let answer = try await post(body, instance: index % instances, path: "/tether-bench-floor")
            return answer.status == 404 ? nil : "floor request answered \(answer.status)"
        }
        let enrolled = try await measure(count) { index in
            let answer = try await post(try Self.requestBody(key: key, deviceID: Self.randomDeviceID()), instance: index % instances)
            return answer.status == 201 ? nil : "enrollment answered \(answer.status): \(String(decoding: answer.body.prefix(300), as: UTF8.self))"
        }
        if let problem = enrolled.problems.first ?? floor.problems.first {
            progress("  \(enrolled.problems.count) enrollments and \(floor.problems.count) floor requests failed; the first: \(problem)")
        }
        let succeeded = count - enrolled.problems.count
        guard succeeded > 0 else { throw TestSupportError("no enrollment succeeded: \(enrolled.problems.first ?? "")") }
        let perEnrollment = enrolled.cpu / Double(succeeded)
        let perRequest = floor.cpu / Double(count - floor.problems.count)
        return BenchFigure(
            name: "enrollment CPU",
            workload: "\(count) devices enrolled from one reusable key, \(Self.concurrency) at a time, POST /enroll spread over \(instances) instance\(instances == 1 ? "" : "s")",
            value: perEnrollment * 1000, unit: "ms server CPU/enrollment", runs: [perEnrollment * 1000],
            seconds: perEnrollment, floorSeconds: perRequest,
            target: "≤ 2 ms server CPU per enrollment", met: perEnrollment <= 0.002 && enrolled.problems.isEmpty,
            extra: [
                "server_cpu_s": enrolled.cpu, "wall_s": enrolled.wall, "enrollments_per_s": Double(succeeded) / enrolled.wall,
                "enrollments_failed": Double(enrolled.problems.count), "floor_server_cpu_s": floor.cpu, "floor_wall_s": floor.wall,
                "floor_ms_cpu_per_request": perRequest * 1000,
            ].merging(
                enrolled.postgresCPU.map { ["postgresql_ms_cpu_per_enrollment": $0 * 1000 / Double(succeeded)] } ?? [:]
            ) { $1 },
            notes: [
                "server CPU = utime + stime of every tether-server process over the requests; PostgreSQL's (postmaster and backends) apart, not in the figure",
                "seconds and floor are CPU seconds per request; floor = the same POST by the same client to a path answered 404 without storage",
            ])
    }

    /// Creates a reusable key tagged `store=K` and returns its text.
    func createKey(store: Int, note: String) async throws -> String {
        let text = try await cluster.admin(["enroll-key", "create", "--reusable", "--tag", "store=\(store)", "--note", note])
        guard EnrollmentKeyText(parsing: text) != nil else { throw TestSupportError("enroll-key create printed no key: \(text)") }
        return text
    }

    /// Enrolls one device and returns its credential.
    func enroll(key: String, instance: Int, name: String? = nil) async throws -> EnrollmentResponse {
        let answer = try await post(try Self.requestBody(key: key, deviceID: Self.randomDeviceID(), name: name), instance: instance)
        guard answer.status == 201 else {
            throw TestSupportError("enrollment answered \(answer.status): \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
        }
        return try JSONDecoder().decode(EnrollmentResponse.self, from: Data(answer.body))
    }

    func post(_ body: [UInt8], instance: Int, path: String = "/enroll") async throws -> EnrollmentPost.Answer {
        try await EnrollmentPost(url: "http://127.0.0.1:\(cluster.ports[instance])\(path)", trust: ServerTrust(), software: Self.software).send(body)
    }

    /// What one batch of requests cost: the servers' CPU and the wall time over it, and the
    /// requests that failed (their reason).
    struct Batch: Sendable {
        var cpu: Double
        /// PostgreSQL's CPU over the batch (nil on SQLite).
        var postgresCPU: Double?
        var wall: Double
        var problems: [String]
    }

    /// Runs `count` requests, ``concurrency`` at a time; `request` returns nil when its request
    /// did what it should, else why not.
    func measure(_ count: Int, _ request: @escaping @Sendable (Int) async throws -> String?) async throws -> Batch {
        let clock = ContinuousClock()
        let cpuBefore = serverCPU
        let postgresBefore = cluster.postgresCPU
        let started = clock.now
        let problems = try await Self.concurrently(count, limit: Self.concurrency, request)
        let wall = started.duration(to: clock.now).seconds
        let postgres = cluster.postgresCPU(since: postgresBefore)
        return Batch(cpu: serverCPU - cpuBefore, postgresCPU: postgres, wall: wall, problems: problems)
    }

    /// Runs `body(0..<count)` with at most `limit` in flight; collects the non-nil answers.
    static func concurrently(_ count: Int, limit: Int, _ body: @escaping @Sendable (Int) async throws -> String?) async throws -> [String] {
        try await withThrowingTaskGroup(of: String?.self) { group in
            var problems: [String] = []
            var next = 0
            while next < min(limit, count) {
                let index = next
                group.addTask { try await body(index) }
                next += 1
            }
            while let problem = try await group.next() {
                if let problem { problems.append(problem) }
                if next < count {
                    let index = next
                    group.addTask { try await body(index) }
                    next += 1
                }
            }
            return problems
        }
    }

    /// A new device id as an agent makes one: 32 hex digits, random.
    static func randomDeviceID() -> String {
        (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    static func requestBody(key: String, deviceID: String, name: String? = nil) throws -> [UInt8] {
        Array(try JSONEncoder().encode(EnrollmentRequest(key: key, deviceID: deviceID, name: name, release: TetherVersion.release)))
    }
}
