import TetherProtocol
import Foundation
import TetherControl
import Synchronization

/// Where the agent's events go, from the one place each happens (the partition lifecycle, the
/// reset executor, the connection loop, reloads): the in-memory log that `tetherctl events`
/// reads, and, for sync errors, the error hook. Never waits.
package final class AgentEvents: Sendable {
    package let log: EventLog
    private let requests: AsyncStream<ErrorHookRequest>.Continuation
    let pendingRequests: AsyncStream<ErrorHookRequest>
    private let metrics: AgentMetrics?
    /// The server's URL and the hooks' working directory (`state_dir`), as the running
    /// configuration says.
    private let place: Mutex<(serverURL: String, workingDirectory: String)>

    package init(log: EventLog = EventLog(), metrics: AgentMetrics? = nil, serverURL: String = "", workingDirectory: String = "/") {
        self.log = log
        self.metrics = metrics
        self.place = Mutex((serverURL, workingDirectory))
        (pendingRequests, requests) = AsyncStream.makeStream(of: ErrorHookRequest.self)
    }

    /// A reload changed the server or `state_dir`.
    func configure(serverURL: String, workingDirectory: String) {
        place.withLock { $0 = (serverURL, workingDirectory) }
    }

    /// Keeps `event` for the readers of the event stream.
    package func emit(_ event: AgentEvent) {
        log.append(event)
    }

    /// A sync error: an event, and a run of the error hook `settings` names (folded, beside sync).
    func syncError(_ report: SyncErrorReport, settings: EventSettings) {
        metrics?.syncErrorMet(action: report.action)
        let (serverURL, workingDirectory) = place.withLock { $0 }
        emit(AgentEvent(
            .syncError, partition: report.partition, code: report.code, name: report.name, message: report.message,
            action: report.action, resetID: report.resetID, cause: report.cause?.rawValue))
        guard let hook = settings.errorHook else { return }
        requests.yield(ErrorHookRequest(
            report: report, hook: hook, interval: .seconds(settings.errorHookMinIntervalSeconds),
            timeout: .seconds(settings.hookTimeoutSeconds), serverURL: serverURL, workingDirectory: workingDirectory))
    }

    /// A change the server reverted (error 231): a `compensating-write` event and a run of the
    /// error hook with the row's table, key and the reason (folded with the partition's other 231s).
    func compensatingWrite(
        _ write: CompensatingWrite, partition: String, store: String, serverVersion: Int64, settings: EventSettings
    ) {
        let code = SyncErrorCode.compensatingWrite
        let key = write.key.text
        emit(AgentEvent(
            .compensatingWrite, partition: partition, code: code.rawValue, name: code.name, message: write.message,
            serverVersion: serverVersion, table: write.table, key: key, reason: write.reason.description))
        guard let hook = settings.errorHook else { return }
        var report = SyncErrorReport(
            partition: partition, store: store, code: code.rawValue, name: code.name, message: write.message,
            action: code.defaultAction.rawValue)
        report.compensation = SyncErrorReport.Compensation(table: write.table, key: key, reason: write.reason.description)
        let (serverURL, workingDirectory) = place.withLock { $0 }
        requests.yield(ErrorHookRequest(
            report: report, hook: hook, interval: .seconds(settings.errorHookMinIntervalSeconds),
            timeout: .seconds(settings.hookTimeoutSeconds), serverURL: serverURL, workingDirectory: workingDirectory))
    }

    /// No more error hook requests (the agent stops).
    func finish() {
        requests.finish()
        log.close()
    }
}

/// A sync error for the error hook, with what its run needs.
struct ErrorHookRequest: Sendable {
    var report: SyncErrorReport
    var hook: String
    var interval: Duration
    var timeout: Duration
    var serverURL: String
    var workingDirectory: String
}
