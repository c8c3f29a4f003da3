import Foundation
import Logging
import TetherControl

/// Runs the error hook as ``ErrorHookScheduler`` decides, beside sync: a run never delays the
/// partition it is about; runs of one partition never overlap; repeats are folded.
struct ErrorHookService<C: Clock>: Sendable where C.Duration == Duration {
    let events: AgentEvents
    let runner: HookRunner
    let clock: C
    let logger: Logger
    /// Counts the runs by result.
    let metrics: AgentMetrics?

    init(events: AgentEvents, runner: HookRunner = HookRunner(), clock: C, logger: Logger, metrics: AgentMetrics? = nil) {
        self.events = events
        self.runner = runner
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
    }

    private enum Input: Sendable {
        case request(ErrorHookRequest)
        case finished(partition: String)
        case timer
    }

    /// Runs until the requests end (the agent stops) or the task is cancelled.
    func run() async {
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
        let start = clock.now
        var scheduler = ErrorHookScheduler()
        var latest: [String: ErrorHookRequest] = [:]
        var timerAt: Duration?
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await request in events.pendingRequests { continuation.yield(.request(request)) }
                continuation.finish()
            }
            for await input in inputs {
                let now = start.duration(to: clock.now)
                let actions: [ErrorHookScheduler.Action]
                switch input {
                case .request(let request):
                    latest[Self.key(request.report)] = request
                    actions = scheduler.errorArrived(request.report, interval: request.interval, at: now)
                case .finished(let partition):
                    actions = scheduler.runFinished(partition: partition, at: now)
                case .timer:
                    timerAt = nil
                    actions = scheduler.timerFired(at: now)
                }
                for action in actions {
                    switch action {
                    case .run(let report, let repeats):
                        guard let request = latest[Self.key(report)] else { continue }
                        group.addTask {
                            await runOnce(request, report: report, repeats: repeats)
                            continuation.yield(.finished(partition: report.partition))
                        }
                    case .wake(let at):
                        if let timerAt, timerAt <= at { continue }
                        timerAt = at
                        let deadline = start.advanced(by: at)
                        group.addTask {
                            try? await clock.sleep(until: deadline, tolerance: nil)  // cancelled: the service stops
                            continuation.yield(.timer)
                        }
                    }
                }
            }
            group.cancelAll()
        }
    }

    private static func key(_ report: SyncErrorReport) -> String { report.partition + "\u{0}" + report.foldingKey }

    /// One run of the hook for `report`; its end is an event and, when it failed, a journal record.
    private func runOnce(_ request: ErrorHookRequest, report: SyncErrorReport, repeats: Int) async {
        var log = logger
        if !report.partition.isEmpty { log[metadataKey: "tether.partition"] = .string(report.partition) }
        let invocation = HookInvocation(
            event: .syncError, executable: request.hook,
            environment: HookInvocation.environment(forError: report, repeats: repeats, serverURL: request.serverURL),
            workingDirectory: request.workingDirectory, timeout: request.timeout)
        let result = await runner.run(invocation, logger: log)
        metrics?.errorHookRan(result)
        if result.isSuccess {
            log.info("hook sync-error \(request.hook) succeeded", metadata: ["tether.hook": "sync-error"])
        } else {
            // No MESSAGE_ID: the catalog's hook-failed entry is about reset hooks.
            log.error(
                "hook sync-error \(request.hook) failed (\(result.summary)); sync is not affected",
                metadata: ["tether.hook": "sync-error"])
        }
        events.emit(AgentEvent(
            .hook, partition: report.partition, code: report.code, name: report.name, resetID: report.resetID,
            outcome: result.outcomeName, hook: HookEvent.syncError.rawValue, exitStatus: result.exitStatus))
    }
}

extension HookResult {
    /// `succeeded`, `failed`, `killed`, `timed-out` or `not-started`, as events show it.
    var outcomeName: String {
        switch self {
        case .succeeded: "succeeded"
        case .failed: "failed"
        case .killedBySignal: "killed"
        case .timedOut: "timed-out"
        case .notStarted: "not-started"
        }
    }

    /// The exit status of a hook that exited; nil otherwise.
    var exitStatus: Int? {
        switch self {
        case .succeeded: 0
        case .failed(let status): Int(status)
        default: nil
        }
    }
}
