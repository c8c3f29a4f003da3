import Foundation
import Logging
import TetherProtocol
import TetherSyncClient
import TetherTestSupport

/// Many new devices bootstrapping one partition at once from its ready file (issue 35, part 1):
/// the server's CPU per device against the server's CPU for one bootstrap of the same partition
/// from rows, measured in the same run. Devices are in-process clients (`TetherSyncClient`, one
/// connection each) that receive the whole state and drop it: the figure is the server's work.
struct ReadyFileFanOutBench {
    let options: BenchOptions
    let cluster: Cluster
    let writer: ClusterAgent

    static let partition = "fan-file"
    static let emptyPartition = "fan-file-empty"
    static let rows = 100_000
    static let devices = 100

    func run() async throws -> BenchFigure {
        try await SQLWorkload.run(writer.store(Self.partition), SQLWorkload.insertScript(prefix: Self.partition, count: Self.rows, transactions: 10))
        try await writer.waitSynced(Self.partition, timeout: 600)
        guard let probe = cluster.serverProbe else { throw TestSupportError("no server process to measure") }
        var logger = Logger(label: "tether-bench.fan-file")
        logger.logLevel = .critical

        // One bootstrap from rows, three times: the server's CPU for each.
        var rowsCPU: [Double] = []
        for _ in 1...3 {
            let before = probe.cpuSeconds ?? 0
            let received = try await Self.bootstrap(url: cluster.url(instance: 0), token: cluster.token, readyFile: nil, logger: logger)
            guard received.rows == Int64(Self.rows) else { throw TestSupportError("rows bootstrap got \(received.rows) rows") }
            rowsCPU.append((probe.cpuSeconds ?? 0) - before)
        }
        // The first bind that asks for a file gets rows and queues the build.
        _ = try await Self.bootstrap(url: cluster.url(instance: 0), token: cluster.token, readyFile: .accept, logger: logger)
        try await waitForFile()

        let before = probe.cpuSeconds ?? 0
        let clock = ContinuousClock()
        let started = clock.now
        let url = cluster.url(instance: 0)
        let token = cluster.token
        let quiet = logger
        let results = try await withThrowingTaskGroup(of: Received.self) { group in
            for _ in 0..<Self.devices {
                group.addTask { try await Self.bootstrap(url: url, token: token, readyFile: .accept, logger: quiet) }
            }
            var all: [Received] = []
            for try await result in group { all.append(result) }
            return all
        }
        let seconds = started.duration(to: clock.now).seconds
        let fileCPU = (probe.cpuSeconds ?? 0) - before
        // What a bind alone costs: the same 100 devices on an empty partition (one empty chunk).
        let bindBefore = probe.cpuSeconds ?? 0
        try await withThrowingTaskGroup(of: Received.self) { group in
            for _ in 0..<Self.devices {
                group.addTask { try await Self.bootstrap(url: url, token: token, partition: Self.emptyPartition, readyFile: .accept, logger: quiet) }
            }
            for try await _ in group {}
        }
        let bindCPU = ((probe.cpuSeconds ?? 0) - bindBefore) / Double(Self.devices)
        let fromFile = results.filter(\.fromFile).count
        let perDevice = fileCPU / Double(Self.devices)
        let rowsMedian = Statistics.median(rowsCPU) ?? 0
        let ratio = perDevice / max(rowsMedian, 1e-9)
        return BenchFigure(
            name: "\(Self.devices) devices bootstrap from one ready file",
            workload: "\(Self.devices) in-process devices bind at once and receive the \(Self.rows)-row partition's ready file",
            value: ratio * 100, unit: "% of a rows bootstrap's server CPU per device", runs: [ratio * 100],
            target: "≤ 5 % per device", met: ratio <= 0.05 && fromFile == Self.devices,
            extra: [
                "server_cpu_s_per_device_file": perDevice, "server_cpu_s_rows_bootstrap": rowsMedian,
                "devices_served_a_file": Double(fromFile), "wall_s_all_devices": seconds,
                "server_cpu_s_per_bind_of_an_empty_partition": bindCPU,
            ],
            notes: ["server CPU = utime + stime of the server process over the phase"])
    }

    struct Received: Sendable {
        var rows: Int64
        var fromFile: Bool
    }

    /// One new device: binds, receives the whole state, unbinds. Counts what came.
    static func bootstrap(
        url: String, token: String, partition: String = partition, readyFile: ReadyFileRequest?, logger: Logger
    ) async throws -> Received {
        try await SyncConnection.run(.init(url: url, software: "tether-bench"), logger: logger) { connection in
            let session = try await connection.bind(BindRequest(
                session: 1, partition: partition, token: token, identity: nil,
                lineage: StoreLineage(uploadSalt: StoreLineage.freshSalt(), integratedSeq: 0, lastSeq: 0, sent: []), readyFile: readyFile))
            var received = Received(rows: 0, fromFile: false)
            for await event in session.events {
                switch event {
                case .bound(let reply):
                    received.fromFile = reply.fileFollows
                case .state(let chunk):
                    if case .rows(let rows) = chunk.content { received.rows += Int64(rows.count) }
                    if chunk.isLast {
                        if received.fromFile { received.rows = chunk.progress.rowsTotal }
                        try? await session.unbind()  // the session's end; the connection closes next
                        return received
                    }
                case .error(let error):
                    throw TestSupportError("bind refused: \(error)")
                case .download, .healed, .unbound, .disconnected, .compensatingWrites, .subscriptionChunk:
                    continue
                }
            }
            return received
        }
    }

    private func waitForFile() async throws {
        let directory = cluster.serverDataDirectory() + "/ready-files/" + Self.partition
        try await eventually("the ready file of \(Self.partition)", timeout: .seconds(300)) {
            // The file and its compressed slices (the server's default), written after it.
            // No directory yet: not built yet.
            ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).contains { $0.hasPrefix("v") && $0.hasSuffix(".slices") }
        }
    }
}
