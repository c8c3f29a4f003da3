import Foundation
import TetherTestSupport

/// Capture overhead: an application's bulk insert (`sqlite3`, the bulk figure's script) into a
/// synced store — through the capture triggers into the change log — against the same script
/// into a plain file (same table, WAL, no triggers). The partition is paused while the script
/// runs, so the agent's upload does not share the cores with it: the figure is what capture
/// costs the application. Resumed and synced after each run (not timed).
struct CaptureBench {
    let options: BenchOptions
    let cluster: Cluster
    let agent: ClusterAgent

    static func partitions(_ options: BenchOptions) -> [String] { (1...options.bulkRuns).map { "capture-\($0)" } }

    func run() async throws -> BenchFigure {
        var times: [Double] = []
        var floors: [Double] = []
        var ratios: [Double] = []
        for partition in Self.partitions(options) {
            let script = SQLWorkload.insertScript(prefix: partition, count: options.bulkRows, transactions: options.bulkTransactions)
            let floorFile = cluster.dir.appending("floor-\(partition).sqlite")
            try await SQLWorkload.makePlainFile(floorFile)
            let floor = try await SQLWorkload.run(floorFile, script)
            SQLWorkload.removeDatabase(floorFile)
            try await agent.ctl(["pause", partition])
            let seconds = try await SQLWorkload.run(agent.store(partition), script)
            try await agent.ctl(["resume", partition])
            try await agent.waitSynced(partition, timeout: 600)
            times.append(seconds)
            floors.append(floor)
            ratios.append(seconds / floor)
        }
        let ratio = Statistics.median(ratios) ?? 0
        return BenchFigure(
            name: "capture overhead", workload: "\(options.bulkRows) rows by sqlite3 into a synced store (partition paused) in \(options.bulkTransactions) transactions",
            value: Statistics.median(times) ?? 0, unit: "s", runs: times, seconds: Statistics.median(times),
            floorSeconds: Statistics.median(floors), target: "≤ 1.5× floor", met: ratio <= 1.5,
            extra: ["ratio_median": ratio],
            notes: ["floor: the same script into a plain file (same table, WAL, no triggers), right before each run"])
    }
}
