import Foundation
import GRDB
import Logging
import TetherSyncClient
import TetherProtocol
import TetherTestSupport

/// Fan-out: many sessions bound to one partition, each on its own WebSocket connection, opened
/// in this process with `TetherSyncClient` (the agent's sync client), and one writer, agent A,
/// written to by a GRDB connection. Each write is timed from the end of its commit on A to its
/// arrival as a download in each session (A's change capture and upload, the server's commit
/// and fan-out, the WebSocket delivery; not the apply to a store, see the latency figure).
/// Also: server memory per connected device, its RSS with every session bound minus before.
struct FanOutBench {
    let options: BenchOptions
    let cluster: Cluster
    let writer: ClusterAgent
    /// Each session subscribed with a filter of its own (issue 51) that holds every row written.
    var filtered = false
    /// Sessions (default: ``BenchOptions/fanOutSessions``).
    var sessionCount: Int? = nil
    static let partition = "fan-out"

    func run() async throws -> [BenchFigure] {
        let recorder = DeliveryRecorder()
        let sessions = sessionCount ?? options.fanOutSessions
        let filtered = self.filtered
        // Each run of the phase writes rows of its own.
        let runTag = sessionCount.map { "\(filtered ? "f" : "u")\($0)-" } ?? ""
        let url = cluster.readerURL
        let token = cluster.token
        let serverBefore = cluster.readerServerProbe?.residentBytes ?? 0
        var serverAfter = 0
        var postgresBefore: Double?
        var postgresWrites: Double?
        var logger = Logger(label: "tether-bench.fan-out")
        logger.logLevel = .critical
        let quietLogger = logger
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<sessions {
                group.addTask {
                    await Self.session(index, url: url, token: token, filtered: filtered, logger: quietLogger, recorder: recorder)
                }
            }
            try await eventually("\(sessions) sessions bound", timeout: .seconds(300), pollInterval: .milliseconds(50)) {
                if let failure = recorder.failures.first { throw TestSupportError(failure) }
                return recorder.readyCount == sessions
            }
            serverAfter = cluster.readerServerProbe?.residentBytes ?? 0
            let source = try StoreReader(path: writer.store(Self.partition))
            postgresBefore = cluster.postgresCPU
            let clock = ContinuousClock()
            for round in 0..<options.fanOutWrites {
                recorder.expect(round: round)
                try source.execute(
                    "INSERT INTO orders (id, customer, total, note) VALUES (?, 'fan-out', ?, NULL)",
                    [runTag + String(format: "fan-%05d", round), Double(round)])
                recorder.committed(at: clock.now)
                // Not delivered in 10 s: counted as missed by finishRound, and the run goes on.
                try? await eventually("round \(round) delivered", timeout: .seconds(10), pollInterval: .milliseconds(1)) {
                    recorder.deliveredCount == sessions
                }
                recorder.finishRound(sessions: sessions)
            }
            postgresWrites = cluster.postgresCPU(since: postgresBefore)
            await recorder.closeAll()
            group.cancelAll()
        }
        let samples = recorder.samples
        // On PostgreSQL: its CPU over the writes (each an upload, then a history read per
        // session), per delivery — the history read's cost docs/scaling.md calls `h`.
        let postgresExtra: [String: Double] = postgresWrites.map { cpu in
            ["postgresql_cpu_s_writes": cpu, "postgresql_cpu_ms_per_delivery": cpu * 1000 / Double(max(1, sessions * options.fanOutWrites))]
        } ?? [:]
        let p99 = Statistics.percentile(99, of: samples) ?? .infinity
        let perDevice = Double(serverAfter - serverBefore) / Double(sessions)
        if filtered {
            return [BenchFigure(
                name: "fan-out \(sessions) filtered sessions",
                workload: "\(sessions) sessions on one partition, each subscribed with a filter of its own holding every row, \(options.fanOutWrites) writes by agent A",
                value: p99, unit: "ms p99", runs: [Statistics.percentile(50, of: samples) ?? 0, p99],
                extra: ["p50_ms": Statistics.percentile(50, of: samples) ?? 0, "p99_ms": p99, "missed_deliveries": Double(recorder.missed)],
                notes: ["runs column: p50, p99 (ms)"])]
        }
        return [
            BenchFigure(
                name: sessionCount == nil ? "fan-out" : "fan-out \(sessions) sessions",
                workload: "\(sessions) sessions (TetherSyncClient, one connection each) on one partition, \(options.fanOutWrites) writes by agent A",
                value: p99, unit: "ms p99", runs: [Statistics.percentile(50, of: samples) ?? 0, p99], target: "p99 delivery ≤ 250 ms",
                met: p99 <= 250 && recorder.missed == 0,
                extra: [
                    "p50_ms": Statistics.percentile(50, of: samples) ?? 0, "p90_ms": Statistics.percentile(90, of: samples) ?? 0,
                    "p99_ms": p99, "max_ms": samples.max() ?? 0, "missed_deliveries": Double(recorder.missed),
                ].merging(postgresExtra) { a, _ in a },
                notes: ["runs column: p50, p99 (ms)"]),
            BenchFigure(
                name: "server memory per connected device", workload: "server VmRSS with \(sessions) bound sessions minus before, / \(sessions)",
                value: perDevice / 1024, unit: "KiB", runs: [perDevice / 1024],
                extra: ["server_rss_before_mb": Double(serverBefore) / 1_048_576, "server_rss_after_mb": Double(serverAfter) / 1_048_576]),
        ]
    }

    private static func session(
        _ index: Int, url: String, token: String, filtered: Bool, logger: Logger, recorder: DeliveryRecorder
    ) async {
        do {
            try await SyncConnection.run(.init(url: url, software: "tether-bench"), logger: logger) { connection in
                recorder.opened(connection)
                // A filter per session (`total > -1 - index`): every row written matches, none shares its filter.
                let subscriptions = filtered
                    ? SubscriptionRequest(held: nil, wanted: try SubscriptionSet([Subscription(table: "orders", filter: "total > \(-1 - index)")]))
                    : nil
                let session = try await connection.bind(BindRequest(
                    session: 1, partition: partition, token: token, identity: nil,
                    lineage: filtered ? StoreLineage(uploadSalt: StoreLineage.freshSalt(), integratedSeq: 0, lastSeq: 0, sent: []) : nil,
                    subscriptions: subscriptions))
                let clock = ContinuousClock()
                for await event in session.events {
                    if event.makesSessionReady { recorder.ready(index) }
                    switch event {
                    case .bound, .state, .healed, .compensatingWrites, .subscriptionChunk:
                        continue
                    case .download:
                        recorder.delivered(index, at: clock.now)
                    case .error(let error):
                        recorder.failed(index, "\(error)")
                        return
                    case .unbound, .disconnected:
                        return
                    }
                }
            }
        } catch {
            if !Task.isCancelled { recorder.failed(index, "\(error)") }
        }
    }
}
