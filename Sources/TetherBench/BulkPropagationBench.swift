import Foundation
import TetherTestSupport

/// Bulk propagation: rows inserted by `sqlite3` on agent A in 100 transactions, timed until all
/// are in agent B's store. Floor: the same script into a plain SQLite file (WAL, no triggers).
struct BulkPropagationBench {
    let options: BenchOptions
    let cluster: Cluster
    let writer: ClusterAgent
    let reader: ClusterAgent

    static func partitions(_ options: BenchOptions) -> [String] { (1...options.bulkRuns).map { "bulk-\($0)" } }

    func run() async throws -> BenchFigure {
        var rates: [Double] = []
        var times: [Double] = []
        var floors: [Double] = []
        var peak = 0
        var cpu: [String: Double] = [:]
        for partition in Self.partitions(options) {
            let script = SQLWorkload.insertScript(prefix: partition, count: options.bulkRows, transactions: options.bulkTransactions)
            let floorFile = cluster.dir.appending("floor-\(partition).sqlite")
            try await SQLWorkload.makePlainFile(floorFile)
            floors.append(try await SQLWorkload.run(floorFile, script))
            SQLWorkload.removeDatabase(floorFile)

            let watcher = try StoreReader(path: reader.store(partition))
            writer.probe?.resetPeak()
            reader.probe?.resetPeak()
            let processes = ["agent_a": writer.probe, "agent_b": reader.probe, "server": cluster.serverProbe]
            let cpuBefore = processes.mapValues { $0?.cpuSeconds ?? 0 }
            let clock = ContinuousClock()
            let started = clock.now
            try await SQLWorkload.run(writer.store(partition), script)
            try await watcher.waitForCount(options.bulkRows, interval: .milliseconds(5))
            let elapsed = started.duration(to: clock.now).seconds
            times.append(elapsed)
            rates.append(Double(options.bulkRows) / elapsed)
            for (name, probe) in processes { cpu["cpu_s_" + name, default: 0] += ((probe?.cpuSeconds ?? 0) - cpuBefore[name, default: 0]) / Double(options.bulkRuns) }
            peak = max(peak, writer.probe?.peakResidentBytes ?? 0, reader.probe?.peakResidentBytes ?? 0)
        }
        let rate = Statistics.median(rates) ?? 0
        return BenchFigure(
            name: "bulk propagation", workload: "\(options.bulkRows) rows by sqlite3 on A in \(options.bulkTransactions) transactions, until all in B's store",
            value: rate, unit: "rows/s", runs: rates, seconds: Statistics.median(times), floorSeconds: Statistics.median(floors),
            peakResidentBytes: peak, target: "≥ 50,000 rows/s", met: rate >= 50_000,
            extra: cpu.merging(["floor_rows_per_s": Double(options.bulkRows) / (Statistics.median(floors) ?? 1)]) { $1 },
            notes: ["cpu_s_*: CPU seconds of each process per run (mean)", "peak RSS is the larger of agents A and B (VmHWM, reset before each run)"])
    }
}
