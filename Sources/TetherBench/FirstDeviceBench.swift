import Foundation
import TetherTestSupport

/// The first new device after a bulk write (issue 50, part 1): `rows` rows written on device A
/// with one `sqlite3` statement, uploaded; the server builds the partition's ready file in the
/// background once the writes settle (`[ready_files] settle_seconds`, default 2 s), and the
/// first new device takes that file. Its own cluster with background builds on (the main
/// cluster builds on demand, so that the other figures are not shared with a build). Floor:
/// the same one-statement insert into a plain file, in the same run.
struct FirstDeviceBench {
    let options: BenchOptions
    let rows: Int
    static let partition = "first-device"

    func run() async throws -> [BenchFigure] {
        var settings = ClusterSettings.bench(options)
        settings.serverConfig = "[limits]\nconnections_per_peer = 1000000\n[ready_files]\nsettle_seconds = 2\n"
        let cluster = try await Cluster(settings)
        do {
            let figures = try await measure(cluster)
            await cluster.shutdown(signal: SIGTERM)
            return figures
        } catch {
            await cluster.shutdown(signal: SIGTERM)
            throw error
        }
    }

    private func measure(_ cluster: Cluster) async throws -> [BenchFigure] {
        let partition = Self.partition
        let clock = ContinuousClock()
        let writer = try cluster.agent("first-writer", partitions: [partition])
        try await writer.start()
        try await writer.waitSynced(partition, timeout: 120)
        let insert = SQLWorkload.insertScript(prefix: partition, count: rows, transactions: 1)
        let written = clock.now
        try await SQLWorkload.run(writer.store(partition), insert)
        try await writer.waitSynced(partition, timeout: 1800)
        let synced = clock.now
        let uploadSeconds = written.duration(to: synced).seconds
        await writer.stop()

        // The file, built without any device asking for it.
        _ = try await cluster.readyFile(of: partition, timeout: .seconds(900))
        let readyAt = clock.now
        let builds = Self.builds(cluster.serverProcess?.standardError ?? "", partition: partition)
        let buildSeconds = builds.last(where: \.fromRows)?.seconds
        for build in builds { progress("  \(build.line)") }

        let plain = cluster.dir.appending("floor-first-device.sqlite")
        try await SQLWorkload.makePlainFile(plain)
        let floor = try await SQLWorkload.run(plain, insert)
        SQLWorkload.removeDatabase(plain)

        let device = try cluster.agent("first-device", partitions: [partition])
        let started = clock.now
        try await device.start()
        try await device.waitSynced(partition, timeout: 1800)
        let bootstrapSeconds = started.duration(to: clock.now).seconds
        let peak = device.probe?.peakResidentBytes
        let count = try await SQLWorkload.count(device.store(partition))
        await device.stop()
        guard count == rows else { throw TestSupportError("first device of \(partition): \(count) rows, expected \(rows)") }

        let waited = synced.duration(to: readyAt).seconds
        var built = BenchFigure(
            name: "ready file built in the background (\(rows) rows)",
            workload: "\(rows) rows written with one sqlite3 statement on A; the server builds the file from rows once the writes settle (its log's seconds)",
            value: buildSeconds ?? waited, unit: "s", runs: [buildSeconds ?? waited], seconds: buildSeconds ?? waited, floorSeconds: floor,
            target: "≤ 2× a one-statement insert",
            extra: [
                "file_ready_after_synced_s": waited, "upload_s": uploadSeconds, "builds": Double(builds.count),
                "builds_from_rows": Double(builds.filter(\.fromRows).count),
                "incremental_builds_s": builds.filter { !$0.fromRows }.reduce(0) { $0 + $1.seconds },
            ],
            notes: buildSeconds == nil ? ["the server's log gave no build time: the wait after the writes were synced is shown"] : [])
        built.met = (built.ratio ?? .infinity) <= 2
        var first = BenchFigure(
            name: "first new device after a bulk write (\(rows) rows)",
            workload: "a new agent, started once the file built in the background is ready, until synced",
            value: bootstrapSeconds, unit: "s", runs: [bootstrapSeconds], seconds: bootstrapSeconds, floorSeconds: floor,
            peakResidentBytes: peak, target: "≤ 0.5× a one-statement insert (start to synced)")
        first.met = (first.ratio ?? .infinity) <= 0.5
        return [built, first]
    }

    /// The server's `ready file built` lines for `partition`: whether from rows, and the seconds.
    static func builds(_ log: String, partition: String) -> [(fromRows: Bool, seconds: Double, line: String)] {
        log.split(separator: "\n").compactMap { line in
            guard line.contains("ready file built from"), line.contains("partition=\(partition)"), let range = line.range(of: "seconds=") else { return nil }
            let seconds = Double(line[range.upperBound...].prefix { $0.isNumber || $0 == "." }) ?? 0
            return (line.contains("built from rows"), seconds, String(line))
        }
    }
}
