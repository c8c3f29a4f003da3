import Foundation
import TetherControl
import TetherTestSupport

/// Subscriptions (issue 51) on a partition of `rows` rows uploaded by agent A (`total` is the
/// row's number × 0.25, so a range of `total` is a range of rows):
/// - a new agent subscribed to 10 % of the rows, start to synced, against the one-statement
///   insert of those rows into a plain file;
/// - the same agent's subscription moved by 10,000 rows (10,000 leave, 10,000 enter), reload to
///   synced, against the one-statement insert of the 20,000 rows moved.
struct SubscriptionBench {
    let options: BenchOptions
    let cluster: Cluster
    let uploader: ClusterAgent
    let rows: Int

    static func partition(_ rows: Int) -> String { "subs-\(rows)" }
    var partition: String { Self.partition(rows) }

    static func filter(_ first: Int, _ end: Int) -> String {
        "[[partition.subscription]]\ntable = \"orders\"\nwhere = \"total >= \(Double(first) * 0.25) AND total < \(Double(end) * 0.25)\"\n"
    }

    func run() async throws -> [BenchFigure] {
        let clock = ContinuousClock()
        try await SQLWorkload.run(uploader.store(partition), SQLWorkload.insertScript(prefix: partition, count: rows, transactions: 100))
        try await uploader.waitSynced(partition, timeout: 1800)
        try await uploader.ctl(["pause", partition])
        let subset = rows / 10
        let moved = min(10_000, subset)

        // Floors: the subset, and the rows a change moves, each inserted in one statement.
        func insertFloor(_ count: Int) async throws -> Double {
            let plain = cluster.dir.appending("floor-subs-\(count).sqlite")
            try await SQLWorkload.makePlainFile(plain)
            let seconds = try await SQLWorkload.run(plain, SQLWorkload.insertScript(prefix: partition, count: count, transactions: 1))
            SQLWorkload.removeDatabase(plain)
            return seconds
        }
        var bootTimes: [Double] = [], bootFloors: [Double] = [], changeTimes: [Double] = [], changeFloors: [Double] = []
        var reloadTimes: [Double] = []
        var bootPeak = 0, changePeak = 0
        for run in 1...(options.quick ? 1 : 3) {
            bootFloors.append(try await insertFloor(subset))
            let agent = try cluster.agent("subs-\(rows)-\(run)", partitions: [partition])
            try agent.reconfigure { $0.partitionExtra[partition] = Self.filter(0, subset) }
            var started = clock.now
            try await agent.start()
            try await agent.waitSynced(partition, timeout: 1800)
            bootTimes.append(started.duration(to: clock.now).seconds)
            bootPeak = max(bootPeak, agent.probe?.peakResidentBytes ?? 0)
            let held = try await SQLWorkload.count(agent.store(partition))
            guard held == subset else { throw TestSupportError("subscription bootstrap of \(partition): \(held) rows, expected \(subset)") }

            // The fixed cost a change pays: a reload that changes nothing, to synced.
            started = clock.now
            try await agent.reload()
            try await agent.waitSynced(partition, timeout: 1800)
            reloadTimes.append(started.duration(to: clock.now).seconds)

            changeFloors.append(try await insertFloor(2 * moved))
            agent.probe?.resetPeak()
            try agent.reconfigure { $0.partitionExtra[partition] = Self.filter(moved, subset + moved) }
            started = clock.now
            try await agent.reload()
            try await agent.waitSynced(partition, timeout: 1800)
            changeTimes.append(started.duration(to: clock.now).seconds)
            changePeak = max(changePeak, agent.probe?.peakResidentBytes ?? 0)
            let after = try await SQLWorkload.count(agent.store(partition))
            let first = try await SQLWorkload.count(agent.store(partition), where: "total < \(Double(moved) * 0.25)")
            guard after == subset, first == 0 else {
                throw TestSupportError("subscription change of \(partition): \(after) rows (\(first) that left), expected \(subset) and 0")
            }
            await agent.stop()
        }
        var bootstrap = BenchFigure(
            name: "subscription bootstrap \(subset) of \(rows) rows",
            workload: "new agent subscribed to 10 % of a \(rows)-row partition (start to synced)",
            value: Statistics.median(bootTimes) ?? 0, unit: "s", runs: bootTimes, seconds: Statistics.median(bootTimes),
            floorSeconds: Statistics.median(bootFloors), peakResidentBytes: bootPeak, target: "≤ 1.5× one-statement insert of the subset")
        bootstrap.met = (bootstrap.ratio ?? .infinity) <= 1.5
        var change = BenchFigure(
            name: "subscription change ±\(moved) rows of \(rows)",
            workload: "the subscription moved by \(moved) rows: \(moved) leave, \(moved) enter (reload to synced)",
            value: Statistics.median(changeTimes) ?? 0, unit: "s", runs: changeTimes, seconds: Statistics.median(changeTimes),
            floorSeconds: Statistics.median(changeFloors), peakResidentBytes: changePeak,
            target: "≤ 1.5× one-statement insert of the \(2 * moved) rows moved",
            extra: ["reload without a change, s": Statistics.median(reloadTimes) ?? 0])
        change.met = (change.ratio ?? .infinity) <= 1.5
        try await uploader.ctl(["resume", partition])
        return [bootstrap, change]
    }
}
