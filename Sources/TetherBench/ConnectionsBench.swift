import Foundation
import Logging
import Synchronization
import TetherSyncClient
import TetherProtocol
import TetherTestSupport

/// Concurrently connected devices: N new devices (`TetherSyncClient`, one WebSocket connection and
/// one bound session each, in this process) connect to one server instance on loopback and
/// stay bound, spread over 100 partitions. The figure is the server's memory per connected
/// device — its `VmRSS` with every session bound minus before the first connected, divided
/// by N — and that all N are bound at once (each received its bind reply and its state).
/// Devices connect in waves of ``wave`` so the listen backlog never overflows; a bind refused
/// with a retry delay is retried after it, as the agent does (counted: `binds_retried`).
/// Devices connect from 127.0.0.1, 127.0.0.2, … (``devicesPerSourceAddress`` each): one
/// source address has about 28,000 ephemeral ports towards the server's one address.
struct ConnectionsBench {
    let options: BenchOptions
    let cluster: Cluster
    static let wave = 250
    static let partitions = 100
    static let devicesPerSourceAddress = 20_000

    /// Devices counted for the bind-storm figure (issue 35: 5,000 in ≤ 5 s on PostgreSQL).
    static let stormDevices = 5_000

    func run() async throws -> [BenchFigure] {
        let allowed = Self.devicesTheOpenFileLimitAllows()
        let devices = min(options.connectedDevices, allowed)
        if devices < options.connectedDevices {
            progress("  \(options.connectedDevices) devices asked, \(devices) connected: the open-file limit (RLIMIT_NOFILE) allows no more")
        }
        let recorder = ConnectionRecorder()
        let url = cluster.url(instance: 0)
        let token = cluster.token
        let probe = cluster.serverProbe
        let own = ProcessProbe(processID: getpid())
        var logger = Logger(label: "tether-bench.connections")
        logger.logLevel = .critical
        let quietLogger = logger
        let serverBefore = probe?.residentBytes ?? 0
        let benchBefore = own.residentBytes ?? 0
        let cpuBefore = probe?.cpuSeconds ?? 0
        let postgresBefore = cluster.postgresCPU
        let clock = ContinuousClock()
        let started = clock.now
        var serverAfter = 0, benchAfter = 0, bound = 0
        var connectSeconds = 0.0
        var storm: (seconds: Double, serverCPU: Double, postgresCPU: Double?)?
        try await withThrowingTaskGroup(of: Void.self) { group in
            var opened = 0
            while opened < devices {
                let wave = min(Self.wave, devices - opened)
                for index in opened..<(opened + wave) {
                    group.addTask { await Self.device(index, url: url, token: token, logger: quietLogger, recorder: recorder) }
                }
                opened += wave
                let target = opened
                try await eventually("\(target) devices bound", timeout: .seconds(120), pollInterval: .milliseconds(20)) {
                    if let failure = recorder.failures.first { throw TestSupportError(failure) }
                    return recorder.readyCount == target
                }
                if opened == Self.stormDevices {
                    storm = (started.duration(to: clock.now).seconds, (probe?.cpuSeconds ?? 0) - cpuBefore, cluster.postgresCPU(since: postgresBefore))
                }
            }
            connectSeconds = started.duration(to: clock.now).seconds
            bound = recorder.readyCount
            serverAfter = probe?.residentBytes ?? 0
            benchAfter = own.residentBytes ?? 0
            try await Self.changeEveryDevice(devices: devices, recorder: recorder)
            await recorder.closeAll()
            group.cancelAll()
        }
        let perDevice = Double(serverAfter - serverBefore) / Double(devices)
        var figures = [
            BenchFigure(
                name: "connected devices",
                workload: "\(devices) devices (TetherSyncClient, one connection and one bound session each) on one instance, \(Self.partitions) partitions",
                value: perDevice / 1024, unit: "KiB/device", runs: [perDevice / 1024],
                target: "≥ 50,000 devices bound at once, ≤ 16 KiB server memory each (issue 50)",
                met: devices >= 50_000 && bound == devices && perDevice <= 16 * 1024,
                extra: [
                    "devices_bound": Double(bound), "server_rss_before_mb": Double(serverBefore) / 1_048_576,
                    "server_rss_after_mb": Double(serverAfter) / 1_048_576, "connect_seconds": connectSeconds,
                    "bench_kib_per_device": Double(benchAfter - benchBefore) / Double(devices) / 1024,
                    "binds_retried": Double(recorder.retryCount),
                ],
                notes: ["server memory = VmRSS with every session bound minus before the first connected, / devices"]
                    + (devices < options.connectedDevices
                        ? ["\(options.connectedDevices) asked: capped at \(devices) by the open-file limit (each device is a socket here and one in the server)"]
                        : []))
        ]
        let samples = recorder.deliveries.samples
        if !samples.isEmpty {
            let p99 = Statistics.percentile(99, of: samples) ?? .infinity
            figures.append(BenchFigure(
                name: "a change to every device",
                workload: "with all \(devices) bound: \(Self.changeRounds) rounds, each an upload by the first device of each of the \(Self.partitions) partitions at once, timed until every other device received it",
                value: p99, unit: "ms p99", runs: [Statistics.percentile(50, of: samples) ?? 0, p99],
                extra: [
                    "p50_ms": Statistics.percentile(50, of: samples) ?? 0, "p99_ms": p99, "max_ms": samples.max() ?? 0,
                    "missed_deliveries": Double(recorder.deliveries.missed), "binds_per_second": Double(devices) / max(connectSeconds, 0.001),
                ],
                notes: ["runs column: p50, p99 (ms); binds_per_second: devices over the seconds from the first connect to the last bound"]))
        }
        if let storm {
            figures.append(BenchFigure(
                name: "bind storm",
                workload: "the first \(Self.stormDevices) of them: new devices binding in waves of \(Self.wave), each waiting for its state",
                value: storm.seconds, unit: "s", runs: [storm.seconds], seconds: storm.seconds,
                target: "≤ 5 s for 5,000 devices on PostgreSQL", met: options.storage == .postgresql ? storm.seconds <= 5 : nil,
                extra: ["server_cpu_s": storm.serverCPU, "server_cpu_ms_per_bind": storm.serverCPU * 1000 / Double(Self.stormDevices)]
                    .merging(storm.postgresCPU.map { ["postgresql_cpu_s": $0, "postgresql_cpu_ms_per_bind": $0 * 1000 / Double(Self.stormDevices)] } ?? [:]) { a, _ in a },
                notes: [
                    "from the first connect to the 5,000th bound; server_cpu: the instance's CPU; postgresql_cpu: PostgreSQL's postmaster and backends (on PostgreSQL)"
                ]))
        }
        return figures
    }

    /// One device: binds, waits for its state, stays bound. A refusal with a retry delay (a
    /// transient storage error) is retried after that delay, as the agent does, and counted.
    private static func device(_ index: Int, url: String, token: String, logger: Logger, recorder: ConnectionRecorder) async {
        let partition = String(format: "conn-%03d", index % partitions)
        let configuration = SyncClientConfiguration(
            url: url, software: "tether-bench", sourceAddress: "127.0.0.\(1 + index / devicesPerSourceAddress)")
        while !Task.isCancelled {
            let retryAfter: Int?
            do {
                retryAfter = try await SyncConnection.run(configuration, logger: logger) { connection -> Int? in
                    recorder.opened(connection)
                    let session = try await connection.bind(BindRequest(session: 1, partition: partition, token: token, identity: nil))
                    if index < partitions { recorder.writes(index, with: session) }
                    for await event in session.events {
                        if event.makesSessionReady { recorder.ready(index) }
                        switch event {
                        case .download(let download):
                            if index >= partitions, download.entries.contains(where: { !$0.changeset.isEmpty }) {
                                recorder.deliveries.delivered(index, at: .now)
                            }
                        case .bound, .state, .healed, .compensatingWrites, .subscriptionChunk:
                            continue
                        case .error(let error):
                            guard let delay = error.retryAfterMilliseconds else {
                                recorder.failed(index, "\(error)")
                                return nil
                            }
                            recorder.retried()
                            return delay
                        case .unbound, .disconnected:
                            return nil
                        }
                    }
                    return nil
                }
            } catch {
                if !Task.isCancelled { recorder.failed(index, "\(error)") }
                return
            }
            guard let retryAfter else { return }
            // The agent's backoff after a refusal that names its delay.
            try? await Task.sleep(for: .milliseconds(max(retryAfter, 100)))  // cancelled: the loop checks and ends
        }
    }

    /// Rounds of the change-to-every-device figure.
    static let changeRounds = 5

    /// Each round: the first device of every partition uploads one row at once; the round ends
    /// when every other device received its partition's row (or after 30 s, the rest missed).
    private static func changeEveryDevice(devices: Int, recorder: ConnectionRecorder) async throws {
        let writers = recorder.writers
        let receivers = devices - writers.count
        guard receivers > 0 else { return }
        for round in 0..<changeRounds {
            recorder.deliveries.expect(round: round)
            recorder.deliveries.committed(at: .now)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, session) in writers {
                    group.addTask {
                        let seq = Int64(round + 1)
                        let row = Changeset([.insert("orders", .text("change-\(index)-\(round)"), [
                            "customer": .text("bench"), "total": .real(Double(round)), "note": .null,
                        ])])
                        try await session.upload([UploadChangeset(firstSeq: seq, lastSeq: seq, changeset: row)])
                    }
                }
                try await group.waitForAll()
            }
            try? await eventually("round \(round) delivered", timeout: .seconds(30), pollInterval: .milliseconds(1)) {
                recorder.deliveries.deliveredCount == receivers
            }
            recorder.deliveries.finishRound(sessions: receivers)
        }
    }

    /// Devices this process and the server (which inherits the limit) can hold sockets for,
    /// leaving 1,000 descriptors for everything else, in whole waves.
    static func devicesTheOpenFileLimitAllows() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return Int.max }
        return max(wave, (Int(limit.rlim_cur) - 1_000) / wave * wave)
    }

    /// Raises this process's open-file limit to what `devices` need (each is a socket here and
    /// one in the server, which inherits the limit): the hard limit too when the process may
    /// (root), else the soft limit up to the hard one. Returns the soft limit now in force.
    static func raiseOpenFileLimit(devices: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return -1 }
        let wanted = rlim_t(devices + 4_096)
        if limit.rlim_max < wanted {
            var raised = limit
            raised.rlim_max = wanted
            raised.rlim_cur = wanted
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return Int(wanted) }
        }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(limit.rlim_cur)
    }
}

/// Which devices are bound, and their connections (to close them at the end).
final class ConnectionRecorder: Sendable {
    private let ready = Mutex(Set<Int>())
    private let problems = Mutex<[String]>([])
    private let connections = Mutex<[SyncConnection]>([])
    private let retries = Mutex(0)

    func retried() { retries.withLock { $0 += 1 } }
    var retryCount: Int { retries.withLock { $0 } }
    func opened(_ connection: SyncConnection) { connections.withLock { $0.append(connection) } }
    func ready(_ device: Int) { ready.withLock { _ = $0.insert(device) } }
    func failed(_ device: Int, _ why: String) { problems.withLock { $0.append("device \(device): \(why)") } }
    var readyCount: Int { ready.withLock { $0.count } }
    var failures: [String] { problems.withLock { $0 } }

    func closeAll() async {
        for connection in connections.withLock({ $0 }) { await connection.close() }
    }

    /// The sessions that write in the change-to-every-device rounds, by device.
    private let writerSessions = Mutex<[Int: SyncSession]>([:])
    func writes(_ device: Int, with session: SyncSession) { writerSessions.withLock { $0[device] = session } }
    var writers: [Int: SyncSession] { writerSessions.withLock { $0 } }
    /// When each other device received each round's change.
    let deliveries = DeliveryRecorder()
}
