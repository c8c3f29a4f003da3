import Foundation
import GRDB
import TetherTestSupport

/// Single-change latency: single-row commits on A (a GRDB connection in the bench process),
/// each timed from the end of its commit until the row is visible on B. B's store is watched by
/// polling `PRAGMA data_version` every 0.2 ms and then looking the row up by primary key.
struct LatencyBench {
    let options: BenchOptions
    let cluster: Cluster
    let writer: ClusterAgent
    let reader: ClusterAgent
    static let partition = "latency"

    func run() async throws -> BenchFigure {
        let source = try StoreReader(path: writer.store(Self.partition))
        let watcher = try StoreReader(path: reader.store(Self.partition))
        let clock = ContinuousClock()
        var samples: [Double] = []
        var timeouts = 0
        let postgresBefore = cluster.postgresCPU
        for i in 0..<options.latencyCommits {
            let id = String(format: "lat-%07d", i)
            try source.execute(
                "INSERT INTO orders (id, customer, total, note) VALUES (?, 'latency customer', ?, 'one row')", [id, Double(i)])
            let committed = clock.now
            let deadline = committed.advanced(by: .seconds(5))
            var lastVersion = -1
            var seen = false
            while clock.now < deadline {
                let version = try watcher.dataVersion()
                if version != lastVersion {
                    lastVersion = version
                    if try watcher.contains(id: id) {
                        seen = true
                        break
                    }
                }
                try await Task.sleep(for: .microseconds(200))
            }
            if seen { samples.append(committed.duration(to: clock.now).seconds * 1000) } else { timeouts += 1 }
        }
        // On PostgreSQL: its CPU per commit (the upload's transaction and the history reads of
        // A's and B's sessions), for docs/scaling.md's `u`.
        let postgresExtra: [String: Double] = cluster.postgresCPU(since: postgresBefore).map { cpu in
            ["postgresql_cpu_ms_per_commit": cpu * 1000 / Double(max(1, options.latencyCommits))]
        } ?? [:]
        let p50 = Statistics.percentile(50, of: samples) ?? .infinity
        let p99 = Statistics.percentile(99, of: samples) ?? .infinity
        return BenchFigure(
            name: "single-change latency", workload: "\(options.latencyCommits) single-row commits on A, each until visible on B",
            value: p50, unit: "ms p50", runs: [p50, p99], target: "p50 ≤ 10 ms, p99 ≤ 50 ms", met: p50 <= 10 && p99 <= 50 && timeouts == 0,
            extra: [
                "p50_ms": p50, "p90_ms": Statistics.percentile(90, of: samples) ?? 0, "p99_ms": p99,
                "max_ms": samples.max() ?? 0, "timeouts_5s": Double(timeouts),
            ].merging(postgresExtra) { a, _ in a },
            notes: ["runs column: p50, p99 (ms); watcher: PRAGMA data_version polled every 0.2 ms"])
    }
}
