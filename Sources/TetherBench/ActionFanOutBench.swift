import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import TetherProtocol
import TetherServer
import TetherSyncClient
import TetherTestSupport

/// Remote actions to a fleet (issue 49: an action to 1,000 connected devices reaches all of
/// them within 5 s). N devices (`TetherSyncClient` in this process, one connection and one bound
/// session each, over 100 partitions) connect to the first instance and report; one request
/// for every device a selection takes (`POST /admin/actions`, asked of the last instance: with
/// two PostgreSQL instances, the announcement crosses over) must reach each of them. The figure
/// is the time from the request until the last device received its action; the floor is a
/// ping round trip on every one of the same connections at once, measured in the same run.
struct ActionFanOutBench {
    let options: BenchOptions
    let cluster: Cluster
    static let partitions = 100

    var devices: Int { options.quick ? 200 : 1_000 }

    func run() async throws -> [BenchFigure] {
        let count = devices
        let recorder = ActionRecorder()
        let url = cluster.url(instance: 0)
        let token = cluster.token
        var logger = Logger(label: "tether-bench.actions")
        logger.logLevel = .critical
        let quiet = logger
        let clock = ContinuousClock()
        var reached = 0.0, answered = 0.0, floor = 0.0, request = 0.0
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask { await Self.device(index, url: url, token: token, logger: quiet, recorder: recorder) }
            }
            try await eventually("\(count) devices reported", timeout: .seconds(180), pollInterval: .milliseconds(20)) {
                if let failure = recorder.failures.first { throw TestSupportError(failure) }
                return recorder.reportedCount == count
            }
            // Reports are kept asynchronously: wait until the ledger holds every device.
            let selection = "partition=act-*"
            try await eventually("\(count) devices in the ledger", timeout: .seconds(60), pollInterval: .milliseconds(100)) {
                try await self.admin(.GET, "actions/count?partition=act-%2A").contains("\"devices\":\(count)")
            }
            // The floor: one ping round trip on every connection at once.
            let pingStart = clock.now
            try await withThrowingTaskGroup(of: Void.self) { pings in
                for connection in recorder.connections { pings.addTask { try await connection.ping() } }
                try await pings.waitForAll()
            }
            floor = pingStart.duration(to: clock.now).seconds

            let started = clock.now
            let body = #"{"action":"retry-now","selection":{"partition":"act-*"}}"#
            let answer = try await admin(.POST, "actions", body: body, instance: options.instances - 1)
            request = started.duration(to: clock.now).seconds
            guard answer.contains("\"devices\":\(count)") else { throw TestSupportError("the request (\(selection)) answered \(answer)") }
            try await eventually("\(count) devices reached", timeout: .seconds(120), pollInterval: .milliseconds(5)) {
                recorder.receivedCount == count
            }
            reached = started.duration(to: recorder.lastReceived ?? clock.now).seconds
            try await eventually("\(count) answers kept", timeout: .seconds(120), pollInterval: .milliseconds(50)) {
                let ended = try await self.admin(.GET, "actions/count?partition=act-%2A")
                return ended.contains("\"devices\"") && recorder.answeredCount == count
            }
            answered = started.duration(to: clock.now).seconds
            await recorder.closeAll()
            group.cancelAll()
        }
        return [
            BenchFigure(
                name: "action fan-out",
                workload: "retry-now to \(count) connected devices (one selection, \(Self.partitions) partitions) asked of instance \(options.instances) of \(options.instances)",
                value: reached, unit: "s", runs: [reached], seconds: reached, floorSeconds: floor,
                target: "an action to 1,000 connected devices reaches all of them within 5 s",
                met: count >= 1_000 ? reached <= 5 : nil,
                extra: [
                    "request_seconds": request, "answered_seconds": answered, "devices": Double(count),
                    "reconnects": Double(recorder.reconnectCount),
                ],
                notes: [
                    "from sending POST /admin/actions to the last device receiving its action; floor: a ping round trip on every one of the connections at once",
                    "answered_seconds: until every device had sent its answer",
                ])
        ]
    }

    /// One device: binds, waits for its state, reports (accepting every action), then answers
    /// each action it is sent. A connection refused or cut before its report (admission limits
    /// while a thousand connect at once, a bind answered with a retry delay) is tried again
    /// after a pause, as the agent would, at most 20 times; counted (`reconnects`).
    private static func device(_ index: Int, url: String, token: String, logger: Logger, recorder: ActionRecorder) async {
        let partition = String(format: "act-%03d", index % partitions)
        let configuration = SyncClientConfiguration(url: url, software: "tether-bench")
        for attempt in 1...20 {
            do {
                try await SyncConnection.run(configuration, logger: logger) { connection in
                    let session = try await connection.bind(BindRequest(session: 1, partition: partition, token: token, identity: nil))
                    for await event in session.events {
                        if event.makesSessionReady { break }
                        if case .error(let error) = event { throw TestSupportError("device \(index): \(error)") }
                    }
                    let entry = DeviceReport.Entry(partition: partition, state: "synced")
                    let report = DeviceReport(
                        token: token, deviceID: String(format: "bench-action-%05d", index), deviceName: "bench \(index)",
                        release: TetherVersion.release, entries: [entry], acceptedActions: RemoteActionKind.all)
                    try await connection.report(report)
                    recorder.opened(connection)
                    recorder.reported(index)
                    for await action in connection.actions {
                        recorder.received(index)
                        try await connection.answerAction(RemoteActionResult(id: action.id, outcome: .done, message: "done"))
                        recorder.answered(index)
                    }
                }
                return
            } catch {
                if Task.isCancelled { return }
                if recorder.hasReported(index) || attempt == 20 {
                    recorder.failed(index, "\(error)")
                    return
                }
                recorder.reconnected()
                try? await Task.sleep(for: .milliseconds(200 * attempt))  // cancelled: the next check ends it
            }
        }
    }

    /// The admin API of an instance (the first unless told): its answer's body.
    private func admin(_ method: HTTPMethod, _ path: String, body: String? = nil, instance: Int = 0) async throws -> String {
        var request = HTTPClientRequest(url: "\(cluster.adminURL(instance: instance))/admin/\(path)")
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer admin-secret")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let text = String(buffer: try await response.body.collect(upTo: 16 << 20))
        guard response.status == .ok else { throw TestSupportError("\(method) /admin/\(path) answered \(response.status): \(text)") }
        return text
    }
}

/// Which devices reported, received and answered their action, and their connections.
final class ActionRecorder: Sendable {
    private struct State {
        var reported: Set<Int> = []
        var received: Set<Int> = []
        var answered: Set<Int> = []
        var lastReceived: ContinuousClock.Instant?
        var problems: [String] = []
        var connections: [SyncConnection] = []
        var reconnects = 0
    }

    private let state = Mutex(State())

    func opened(_ connection: SyncConnection) { state.withLock { $0.connections.append(connection) } }
    func reported(_ device: Int) { state.withLock { _ = $0.reported.insert(device) } }
    func received(_ device: Int) {
        let now = ContinuousClock.now
        state.withLock {
            if $0.received.insert(device).inserted { $0.lastReceived = now }
        }
    }
    func answered(_ device: Int) { state.withLock { _ = $0.answered.insert(device) } }
    func hasReported(_ device: Int) -> Bool { state.withLock { $0.reported.contains(device) } }
    func reconnected() { state.withLock { $0.reconnects += 1 } }
    var reconnectCount: Int { state.withLock { $0.reconnects } }
    func failed(_ device: Int, _ why: String) { state.withLock { $0.problems.append("device \(device): \(why)") } }
    var reportedCount: Int { state.withLock { $0.reported.count } }
    var receivedCount: Int { state.withLock { $0.received.count } }
    var answeredCount: Int { state.withLock { $0.answered.count } }
    var lastReceived: ContinuousClock.Instant? { state.withLock { $0.lastReceived } }
    var failures: [String] { state.withLock { $0.problems } }
    var connections: [SyncConnection] { state.withLock { $0.connections } }

    func closeAll() async {
        for connection in connections { await connection.close() }
    }
}
