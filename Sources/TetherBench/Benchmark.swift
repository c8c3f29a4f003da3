import Foundation
import TetherTestSupport

/// The whole benchmark: one server, agents as separate processes, every figure in turn. A
/// figure that fails is reported as an error and the others still run; the run itself never
/// fails (it is not a test).
package struct Benchmark {
    package let options: BenchOptions
    /// Figures to run (`connections`, `fan-file`, `scale`, `subscriptions`, `bulk`, `capture`, `latency`, `wire`, `fanout`, `idle`,
    /// `enrollment`, `ledger`, `actions`, `first-device`); empty: all.
    package let only: Set<String>

    package init(options: BenchOptions, only: Set<String> = []) {
        self.options = options
        self.only = only
    }

    private func wants(_ phase: String) -> Bool { only.isEmpty || only.contains(phase) }

    package func run() async -> BenchReport {
        var mode = options.quick ? "quick" : "full"
        if options.storage == .postgresql { mode += ", PostgreSQL, \(options.instances) instance\(options.instances == 1 ? "" : "s")" }
        var report = BenchReport(mode: mode)
        let clock = ContinuousClock()
        let started = clock.now
        progress("tether-bench (\(report.mode)): \(report.machine); peak RSS = /proc/<pid>/status VmHWM, reset per phase")
        if wants("connections") {
            progress("open-file limit raised to \(ConnectionsBench.raiseOpenFileLimit(devices: options.connectedDevices)) (the server inherits it)")
        }
        // The ledger's pages need no server process: its storages are opened in-process.
        if wants("ledger") {
            await phase("ledger", &report) { report in
                for figure in try await LedgerBench(options: options).run() { report.add(figure) }
            }
        }
        if only == ["ledger"] {
            report.totalSeconds = started.duration(to: clock.now).seconds
            return report
        }
        let cluster: Cluster
        do {
            // The subscription figures filter on orders.total: it is queryable when they run
            // (or when TETHER_BENCH_QUERYABLE=1 asks, to measure what the index costs writes).
            let queryable = wants("subscriptions") || ProcessInfo.processInfo.environment["TETHER_BENCH_QUERYABLE"] == "1"
            cluster = try await Cluster(.bench(options, queryable: queryable ? ["orders.total"] : []))
        } catch {
            report.errors.append("cluster: \(error)")
            progress("tether-bench: cannot start the server: \(error)")
            return report
        }
        do {
            try await runFigures(cluster, &report)
        } catch {
            report.errors.append("\(error)")
            progress("tether-bench: \(error)")
        }
        await cluster.shutdown(signal: SIGTERM)
        // Its own cluster, with ready files built in the background.
        if wants("first-device"), let rows = options.scales.max() {
            await phase("first device", &report) { report in
                for figure in try await FirstDeviceBench(options: options, rows: rows).run() { report.add(figure) }
            }
        }
        report.totalSeconds = started.duration(to: clock.now).seconds
        return report
    }

    private func runFigures(_ cluster: Cluster, _ report: inout BenchReport) async throws {
        // First, while no agent is connected: the server's memory is the devices' alone.
        if wants("connections") {
            await phase("connections", &report) { report in
                for figure in try await ConnectionsBench(options: options, cluster: cluster).run() { report.add(figure) }
            }
        }
        // Before any agent connects: the devices are the ledger's only ones (one user's quota).
        if wants("actions") {
            await phase("actions", &report) { report in
                for figure in try await ActionFanOutBench(options: options, cluster: cluster).run() { report.add(figure) }
            }
        }
        // Phases that need no agent: run alone, they start none.
        if !only.isEmpty && only.isSubset(of: ["connections", "enrollment", "ledger", "actions", "first-device"]) {
            await runEnrollment(cluster, &report)
            return
        }
        let scalePartitions = wants("scale") ? options.scales.map(ScaleBench.partition) : []
        let shared = BulkPropagationBench.partitions(options) + [LatencyBench.partition]
        let capturePartitions = wants("capture") ? CaptureBench.partitions(options) : []
        let fanFile = wants("fan-file") ? [ReadyFileFanOutBench.partition] : []
        let subscriptionRows = options.quick ? 100_000 : 1_000_000
        let subscriptionPartitions = wants("subscriptions") ? [SubscriptionBench.partition(subscriptionRows)] : []
        let writer = try cluster.agent(
            "agent-a", partitions: scalePartitions + shared + capturePartitions + [FanOutBench.partition] + fanFile + subscriptionPartitions)
        let reader = try cluster.agent("agent-b", partitions: shared, url: cluster.readerURL)
        try await writer.start()
        try await reader.start()
        for partition in shared + capturePartitions + [FanOutBench.partition] + fanFile { try await writer.waitSynced(partition) }
        for partition in shared { try await reader.waitSynced(partition) }

        if wants("fan-file") {
            await phase("fan-file", &report) { report in
                report.add(try await ReadyFileFanOutBench(options: options, cluster: cluster, writer: writer).run())
            }
        }
        if wants("scale") {
            for rows in options.scales {
                await phase("scale \(rows)", &report) { report in
                    let outcome = try await ScaleBench(options: options, cluster: cluster, uploader: writer, rows: rows).run(&report)
                    report.add(outcome.upload)
                    report.add(outcome.bootstrap)
                    report.add(outcome.readyFileBootstrap)
                    report.add(outcome.recover)
                    report.add(outcome.recoverWithHeal)
                    report.add(outcome.discard)
                }
            }
        }
        if wants("subscriptions") {
            await phase("subscriptions", &report) { report in
                for figure in try await SubscriptionBench(options: options, cluster: cluster, uploader: writer, rows: subscriptionRows).run() {
                    report.add(figure)
                }
            }
            // The same fan-out without and with a filter per session: what filtering costs the server.
            await phase("subscriptions fan-out", &report) { report in
                let sessions = options.quick ? 200 : 5_000
                _ = ConnectionsBench.raiseOpenFileLimit(devices: sessions)
                let plain = try await FanOutBench(options: options, cluster: cluster, writer: writer, sessionCount: sessions).run()[0]
                let filtered = try await FanOutBench(options: options, cluster: cluster, writer: writer, filtered: true, sessionCount: sessions).run()[0]
                report.add(plain)
                report.add(filtered)
                let ratio = filtered.value / max(plain.value, 0.001)
                report.add(BenchFigure(
                    name: "filtered fan-out vs unfiltered", workload: "p99 delivery of \(sessions) filtered sessions over \(sessions) unfiltered, same run",
                    value: ratio, unit: "×", runs: [ratio], target: "≤ 2×", met: ratio <= 2))
            }
        }
        if wants("bulk") {
            await phase("bulk", &report) { report in
                report.add(try await BulkPropagationBench(options: options, cluster: cluster, writer: writer, reader: reader).run())
            }
        }
        if wants("capture") {
            await phase("capture", &report) { report in
                report.add(try await CaptureBench(options: options, cluster: cluster, agent: writer).run())
            }
        }
        if wants("latency") {
            await phase("latency", &report) { report in
                report.add(try await LatencyBench(options: options, cluster: cluster, writer: writer, reader: reader).run())
            }
        }
        if wants("wire") {
            await phase("wire", &report) { report in report.add(try await WireBytesBench(options: options, cluster: cluster).run()) }
        }
        if wants("fanout") {
            await phase("fan-out", &report) { report in
                for figure in try await FanOutBench(options: options, cluster: cluster, writer: writer).run() { report.add(figure) }
            }
        }
        await writer.stop()
        await reader.stop()
        if wants("idle") {
            await phase("idle", &report) { report in report.add(try await IdleBench(options: options, cluster: cluster).run()) }
        }
        // Last: the devices it enrolls stay in the server's storage.
        await runEnrollment(cluster, &report)
    }

    private func runEnrollment(_ cluster: Cluster, _ report: inout BenchReport) async {
        guard wants("enrollment") else { return }
        await phase("enrollment", &report) { report in
            for figure in try await EnrollmentBench(options: options, cluster: cluster).run() { report.add(figure) }
        }
    }

    private func phase(_ name: String, _ report: inout BenchReport, _ body: (inout BenchReport) async throws -> Void) async {
        let clock = ContinuousClock()
        let started = clock.now
        progress("— \(name)…")
        do {
            try await body(&report)
        } catch {
            report.errors.append("\(name): \(error)")
            progress("tether-bench: \(name) failed: \(error)")
        }
        progress("— \(name): \(BenchReport.number(started.duration(to: clock.now).seconds)) s")
    }
}
