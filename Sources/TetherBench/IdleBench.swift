import Foundation
import TetherControl
import TetherTestSupport

/// Idle partitions: one agent with 100 synced partitions and no writes; its CPU time over the
/// period (`/proc/<pid>/stat` utime + stime) and its RSS at the end (`VmRSS`, `VmHWM`, and its
/// anonymous and file-backed parts `RssAnon` and `RssFile`).
struct IdleBench {
    let options: BenchOptions
    let cluster: Cluster

    func run() async throws -> BenchFigure {
        // The same agent with one partition first: the difference is the cost of a partition.
        let single = try cluster.agent("idle-1", partitions: ["idle-single"])
        try await single.start()
        try await single.waitSynced("idle-single")
        let singleRSS = single.probe?.residentBytes ?? 0
        let singleAnonymous = single.probe?.residentAnonymousBytes ?? 0
        await single.stop()

        let partitions = (0..<options.idlePartitions).map { String(format: "idle-%03d", $0) }
        let agent = try cluster.agent("idle", partitions: partitions)
        try await agent.start()
        try await eventually("\(partitions.count) partitions synced", timeout: .seconds(300), pollInterval: .milliseconds(200)) {
            let states = try await agent.partitions().compactMap { $0["state"]?.stringValue }
            return states.count == partitions.count && states.allSatisfy { $0 == "synced" }
        }
        guard let probe = agent.probe, let cpuBefore = probe.cpuSeconds else { throw TestSupportError("no /proc for the idle agent") }
        let clock = ContinuousClock()
        let started = clock.now
        // The measurement is the idle period itself: nothing to wait for but time.
        try await Task.sleep(for: .seconds(options.idleSeconds))
        let wall = started.duration(to: clock.now).seconds
        let cpuAfterFirst = probe.cpuSeconds ?? cpuBefore
        let cpu = (cpuAfterFirst - cpuBefore) / wall * 100
        // Then as long again: the first period follows the bootstrap (the commit watcher's
        // re-checks after the stores' idle release); this one is an agent long idle.
        let second = clock.now
        try await Task.sleep(for: .seconds(options.idleSeconds))
        let steadyWall = second.duration(to: clock.now).seconds
        let steadyCPU = ((probe.cpuSeconds ?? cpuAfterFirst) - cpuAfterFirst) / steadyWall * 100
        let rss = probe.residentBytes ?? 0
        let anonymous = probe.residentAnonymousBytes ?? 0
        let file = probe.residentFileBytes ?? 0
        let peak = probe.peakResidentBytes ?? 0
        await agent.stop()
        return BenchFigure(
            name: "idle partitions",
            workload: "agent with \(partitions.count) synced partitions, no writes, the \(options.idleSeconds) s after they are synced (steady_cpu_percent: the \(options.idleSeconds) s after those)",
            value: cpu, unit: "% CPU", runs: [cpu], peakResidentBytes: peak, target: "CPU ≤ 1 %, RSS ≤ 32 MB",
            met: cpu <= 1 && rss <= 32 * 1_048_576,
            extra: [
                "steady_cpu_percent": steadyCPU, "steady_cpu_seconds": steadyCPU * steadyWall / 100,
                "rss_mb": Double(rss) / 1_048_576, "rss_anon_mb": Double(anonymous) / 1_048_576,
                "rss_file_mb": Double(file) / 1_048_576, "cpu_seconds": cpu * wall / 100, "rss_one_partition_mb": Double(singleRSS) / 1_048_576,
                "rss_one_partition_anon_mb": Double(singleAnonymous) / 1_048_576,
                "rss_per_partition_kib": Double(rss - singleRSS) / Double(max(1, partitions.count - 1)) / 1024,
            ])
    }
}
