import Foundation
import Logging
import Synchronization
import TetherProtocol
import TetherSyncClient
import TetherTestSupport

/// Bind with a tag template: ``BenchOptions/templateBinds`` binds (one new connection each,
/// connect, bind, wait for the state, close; ``EnrollmentBench/concurrency`` at a time, spread
/// over the instances) by enrolled devices whose grant is `tag:store=K` → `store-{tag:store}`,
/// against the same binds with the cluster's `[[user]]` token on the same `store-K` partitions.
/// Device and user batches alternate over ``BenchOptions/templateBindRuns`` runs (device first
/// in even runs, user first in odd ones) so that load drifts cancel; a first run of each, where
/// every device's record is read from storage (a cold cache), is reported apart.
extension EnrollmentBench {
    /// Which kind of batch goes first in run `run`: devices in even runs, users in odd ones.
    static func bindOrder(run: Int) -> [BindKind] { run.isMultiple(of: 2) ? [.device, .user] : [.user, .device] }

    enum BindKind: Sendable { case device, user }

    func bindFigure() async throws -> BenchFigure {
        let count = options.templateBinds
        var keys: [String] = []
        for store in 0..<Self.stores { keys.append(try await createKey(store: store, note: "tether-bench binds")) }
        let enrolledKeys = keys
        let credentials = Mutex<[Int: String]>([:])
        let failures = try await Self.concurrently(count, limit: Self.concurrency) { index in
            let response = try await enroll(key: enrolledKeys[index % Self.stores], instance: index % instances)
            credentials.withLock { $0[index] = response.credential }
            return nil
        }
        guard failures.isEmpty else { throw TestSupportError("enrolling the bind devices: \(failures[0])") }
        let deviceTokens = credentials.withLock { dictionary in (0..<count).map { dictionary[$0]! } }
        let userTokens = Array(repeating: cluster.token, count: count)
        let partitions = (0..<count).map { "store-\($0 % Self.stores)" }

        // A first run of each: every device's record read from storage, every partition bound first.
        let coldUser = try await bindBatch(tokens: userTokens, partitions: partitions)
        let coldDevice = try await bindBatch(tokens: deviceTokens, partitions: partitions)
        var device: [Double] = [], user: [Double] = [], ratios: [Double] = []
        var postgres: [BindKind: [Double]] = [:]
        var retried = coldUser.retried + coldDevice.retried
        for run in 0..<options.templateBindRuns {
            var perBind: [BindKind: Double] = [:]
            for kind in Self.bindOrder(run: run) {
                let batch = try await bindBatch(tokens: kind == .device ? deviceTokens : userTokens, partitions: partitions)
                perBind[kind] = batch.cpu / Double(count)
                if let cpu = batch.postgresCPU { postgres[kind, default: []].append(cpu / Double(count)) }
                retried += batch.retried
            }
            device.append(perBind[.device]!)
            user.append(perBind[.user]!)
            ratios.append(perBind[.device]! / perBind[.user]!)
        }
        let deviceMedian = Statistics.median(device)!
        let userMedian = Statistics.median(user)!
        // Judged on the runs' own ratios: each pairs a device batch with a floor batch run back to
        // back, so a drift of the machine's load between runs cancels in it.
        let ratio = Statistics.median(ratios)!
        return BenchFigure(
            name: "bind with a tag template",
            workload: "\(count) binds (one connection each: connect, bind, state, close; \(Self.concurrency) at a time) by enrolled devices granted by tag:store=K → store-{tag:store}, \(Self.stores) stores, \(instances) instance\(instances == 1 ? "" : "s"), \(options.templateBindRuns) runs alternating with the floor",
            value: deviceMedian * 1000, unit: "ms server CPU/bind", runs: device.map { $0 * 1000 },
            seconds: deviceMedian, floorSeconds: userMedian,
            target: "within 5 % of a [[user]] bind (median of the runs' ratios ≤ 1.05)", met: ratio <= 1.05,
            extra: [
                "floor_ms_cpu_per_bind": userMedian * 1000, "median_of_run_ratios": ratio,
                "cold_device_ms_cpu_per_bind": coldDevice.cpu * 1000 / Double(count),
                "cold_user_ms_cpu_per_bind": coldUser.cpu * 1000 / Double(count),
                "binds_retried": Double(retried),
            ].merging(
                Self.both(postgres[.device].flatMap(Statistics.median), postgres[.user].flatMap(Statistics.median)).map { pair in
                    ["postgresql_ms_cpu_per_device_bind": pair.0 * 1000, "postgresql_ms_cpu_per_user_bind": pair.1 * 1000]
                } ?? [:]
            ) { $1 },
            notes: [
                "floor = the same binds with the [[user]] token (cluster.token) on the same partitions, in the same runs",
                "runs are the device binds' CPU per bind; the target is judged on the median of the runs' ratios (the ratio column is median over median); run ratios: " + ratios.map { BenchReport.number($0) }.joined(separator: ", "),
                "cold = the first run of each (the device's record read from storage), not in the median",
            ])
    }

    struct BindBatch: Sendable {
        var cpu: Double
        /// PostgreSQL's CPU over the batch (nil on SQLite).
        var postgresCPU: Double?
        var retried: Int
    }

    /// `tokens.count` binds, each on a new connection: connect, bind `partitions[i]`, wait until
    /// the session is ready, close. A bind refused with a retry delay is bound again after it,
    /// as the agent does (counted). The servers' CPU from quiet before it to quiet again after it.
    func bindBatch(tokens: [String], partitions: [String]) async throws -> BindBatch {
        let retries = Mutex(0)
        let urls = (0..<instances).map { cluster.url(instance: $0) }
        let logger = quietLogger
        await waitForQuietServers()
        let cpuBefore = serverCPU
        let postgresBefore = cluster.postgresCPU
        let failures = try await Self.concurrently(tokens.count, limit: Self.concurrency) { index in
            let configuration = SyncClientConfiguration(url: urls[index % urls.count], software: Self.software)
            while true {
                let outcome = try await Self.bindOnce(configuration, token: tokens[index], partition: partitions[index], logger: logger)
                switch outcome {
                case .ready: return nil
                case .failed(let why): return why
                case .retry(let milliseconds):
                    retries.withLock { $0 += 1 }
                    try await Task.sleep(for: .milliseconds(max(milliseconds, 100)))
                }
            }
        }
        guard failures.isEmpty else { throw TestSupportError("\(failures.count) binds failed; the first: \(failures[0])") }
        await waitForQuietServers()
        let postgres = cluster.postgresCPU(since: postgresBefore)
        return BindBatch(cpu: serverCPU - cpuBefore, postgresCPU: postgres, retried: retries.withLock { $0 })
    }

    enum BindOutcome: Sendable {
        case ready
        case retry(milliseconds: Int)
        case failed(String)
    }

    static func bindOnce(_ configuration: SyncClientConfiguration, token: String, partition: String, logger: Logger) async throws -> BindOutcome {
        try await SyncConnection.run(configuration, logger: logger) { connection -> BindOutcome in
            let session = try await connection.bind(BindRequest(session: 1, partition: partition, token: token, identity: nil))
            for await event in session.events {
                if event.makesSessionReady { return .ready }
                switch event {
                case .bound, .state, .download, .healed, .compensatingWrites, .subscriptionChunk: continue
                case .error(let error):
                    if let delay = error.retryAfterMilliseconds { return .retry(milliseconds: delay) }
                    return .failed("\(partition): \(error)")
                case .unbound, .disconnected(_): return .failed("\(partition): the session ended before it was ready")
                }
            }
            return .failed("\(partition): the session ended before it was ready")
        }
    }

    /// Waits until the servers' CPU rises by less than 5 ms in 100 ms (the closes of a batch
    /// handled), for at most 5 s.
    func waitForQuietServers() async {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(5))
        var last = serverCPU
        while clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(100))  // cancelled: the bench is ending anyway
            let now = serverCPU
            if now - last < 0.005 { return }
            last = now
        }
    }
}
