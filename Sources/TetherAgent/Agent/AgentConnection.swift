import Foundation
import Logging
import TetherProtocol
import TetherSyncClient

/// The agent's one connection to the server: connects, runs every partition on it, and
/// reconnects with capped exponential backoff and jitter when it ends. The executor of
/// ``StateMachine``: what the connection is doing lives in the machine's phase; this actor
/// performs its answers (the log lines, the events, the metrics, the wake-ups).
actor AgentConnection {
    private var machine = StateMachine<SyncConnection, PartitionController>()
    /// Ends a reconnect backoff early (a reload) or the wait after a fatal connection error.
    private nonisolated let wake = WakeSignal()
    private nonisolated let logger: Logger
    private nonisolated let metrics: AgentMetrics
    private nonisolated let events: AgentEvents

    /// What the loop calls out to: the partitions, READY=1, and what runs beside the partitions.
    struct Hooks: Sendable {
        /// Every partition's session started (or the first attempt ended, or syncing stopped).
        var ready: @Sendable () async -> Void
        /// Runs while a connection is up, beside the partitions (the device reports).
        var whileConnected: @Sendable (SyncConnection) async -> Void
        /// Runs a remote action the server sent (protocol 8) and says what became of it
        /// (``SyncAgent/answer(_:)``); by default each is refused.
        var answer: @Sendable (RemoteAction) async -> RemoteActionResult = { action in
            RemoteActionResult(id: action.id, outcome: .refused, message: "this agent runs no remote actions")
        }
    }

    init(logger: Logger, metrics: AgentMetrics, events: AgentEvents, backoff: Backoff = Backoff()) {
        self.logger = logger
        self.metrics = metrics
        self.events = events
        machine = StateMachine(backoff: backoff)
    }

    /// The connection partitions, resets and `wait-synced` use now; nil while not connected.
    var current: SyncConnection? { machine.connection }

    /// The phase, for tests.
    var phase: StateMachine<SyncConnection, PartitionController>.Phase { machine.phase }

    /// Runs until cancelled.
    func run(partitions: PartitionRegistry, hooks: Hooks) async {
        let wake = self.wake
        while !Task.isCancelled {
            switch machine.attemptDue(at: .now) {
            case .waitForReload:
                await started(hooks)
                await wake.wait()  // a reload clears the stop
                continue
            case .connect:
                break
            }
            let configuration = await partitions.configuration()
            // A missing, empty or cloned credential: enroll first (or stop) when the key says so.
            guard await credentialReady(configuration, partitions: partitions, hooks: hooks) else { continue }
            // Trust as `[server]` says: ca_file's CAs only, pin_sha256, tls_min_version.
            let client = configuration.server.clientConfiguration(software: "tetherd \(TetherVersion.release)")
            let logger = self.logger
            do {
                try await SyncConnection.run(client, logger: logger) { connection in
                    await self.serve(connection, partitions: partitions, hooks: hooks)
                }
            } catch is CancellationError {
                return
            } catch {
                logger.warning("cannot sync with \(configuration.server.url): \(error)")
                if !Task.isCancelled { await announce(TransportFailure.report(error), partitions: partitions) }
            }
            var random = SystemRandomNumberGenerator()
            let end = machine.attemptEnded(at: .now, cancelled: Task.isCancelled, using: &random)
            metrics.disconnected(reconnecting: !Task.isCancelled)
            for controller in await partitions.controllers() { await controller.connectionLost() }
            await started(hooks)  // offline is a started session too: applications can work
            guard case .backOff(let delay) = end, !Task.isCancelled else { return }
            logger.info("reconnecting in \(delay)")
            await wake.sleep(for: delay)
        }
    }

    /// Runs every partition's controller on `connection` until it closes.
    private func serve(_ connection: SyncConnection, partitions: PartitionRegistry, hooks: Hooks) async {
        let (added, continuation) = AsyncStream.makeStream(of: PartitionController.self)
        machine.connected(connection, additions: continuation, at: .now)
        metrics.connected(at: Date())
        let url = await partitions.configuration().server.url
        logger.notice("connected to \(url)")
        // Taken once the additions are open: a partition a reload adds meanwhile may be in both.
        let initial = await partitions.controllers()
        await withTaskGroup(of: Void.self) { group in
            var running = Set(initial.map { ObjectIdentifier($0) })
            for controller in initial {
                group.addTask { await controller.run(on: connection) }
            }
            group.addTask {
                // Keep-alive (a ping every 15 s) and liveness: ends the additions as soon as the
                // connection is gone, so that the reconnect backoff starts at once.
                await withTaskGroup(of: Void.self) { liveness in
                    liveness.addTask { await connection.waitUntilClosed() }
                    liveness.addTask {
                        while !Task.isCancelled {
                            do {
                                try await Task.sleep(for: .seconds(15))
                                try await connection.ping()
                            } catch { return }
                        }
                    }
                    await liveness.next()
                    liveness.cancelAll()
                }
                continuation.finish()
            }
            group.addTask { await hooks.whileConnected(connection) }
            group.addTask { [logger] in
                // Credential rotation (protocol 7): written, then acknowledged. Not acknowledged
                // (the connection is gone): the next bind with the new credential completes it.
                for await credential in connection.credentials {
                    let tokenFile = await partitions.configuration().server.tokenFile
                    guard case .written(let digest) = await CredentialRotation.store(credential, tokenFile: tokenFile, log: logger) else { continue }
                    try? await connection.acknowledgeCredential(digest: digest)
                }
            }
            group.addTask {
                // Remote actions (protocol 8): each in turn, answered once it has run. Not
                // answered (the connection is gone): the server sends it again on the next
                // connection, and the agent answers it again from memory.
                for await action in connection.actions {
                    let result = await hooks.answer(action)
                    try? await connection.answerAction(result)
                }
            }
            await self.started(hooks)
            for await controller in added where running.insert(ObjectIdentifier(controller)).inserted {
                group.addTask { await controller.run(on: connection) }
            }
            group.cancelAll()
        }
        let closedByServer = machine.connectionEnding(cancelled: Task.isCancelled)
        await connection.close()
        // Once per connection: the connection-level error it ended with, or that it was cut.
        if let reason = await connection.closeReason {
            await announce(SyncErrorReport(reason, partition: "", store: ""), partitions: partitions)
        } else if closedByServer {
            await announce(
                SyncErrorReport(
                    partition: "", store: "", code: nil, name: "connection_closed",
                    message: "the server closed the connection without an error (a restart, a proxy, or a cut)", action: "transient"),
                partitions: partitions)
        }
        // A welcome with another protocol version arrives before any session may exist.
        if let violation = await connection.protocolViolation, violation.code == .wrongProtocolVersion {
            connectionFailed(violation, serverURL: url)
        }
    }

    /// The attempt's credential check (``CredentialDecision``) and, when it asks, the
    /// enrollment (``DeviceEnrollment``): true when the attempt goes on to connect; false when
    /// the loop takes its next turn (after a backoff, into a stop, or cancelled).
    private func credentialReady(_ configuration: AgentConfiguration, partitions: PartitionRegistry, hooks: Hooks) async -> Bool {
        let server = configuration.server
        let deviceID: String
        do {
            deviceID = try partitions.stateDatabase.deviceID()
        } catch {
            // Without an id there is nothing to compare or enroll with; the bind's report says the rest.
            logger.error("cannot read the device id from the state database: \(error); the token file is used as it is")
            return machine.credentialChecked(.useToken, at: .now) == .connect
        }
        let refused = await partitions.takeCredentialRefusal()
        switch machine.credentialChecked(DeviceEnrollment.decision(server, deviceID: deviceID, refused: refused), at: .now) {
        case .connect:
            return true
        case .stop(let error, let log):
            if log { await logEnrollment(error, then: "syncing stops until the configuration is reloaded", partitions: partitions, stops: true) }
            return false
        case .enroll(let reason):
            // The decision enrolls only with a key set.
            let enrollment = DeviceEnrollment(server: server, keyFile: server.enrollmentKeyFile ?? "", device: configuration.device, deviceID: deviceID)
            logger.notice("enrolling device \(deviceID) with \(enrollment.enrollURL ?? server.url): \(reason)")
            let outcome: Result<Void, EnrollmentError>
            do {
                let enrolled = try await enrollment.run()
                let tags = enrolled.tags.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
                logger.notice(
                    "enrolled as device \(enrolled.name) (\(enrolled.deviceID))\(tags.isEmpty ? "" : ", tags \(tags)"); the credential is in \(server.tokenFile)")
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            var random = SystemRandomNumberGenerator()
            switch machine.enrollmentEnded(outcome, at: .now, cancelled: Task.isCancelled, using: &random) {
            case .connect:
                return true
            case .finish:
                return false
            case .backOff(let delay, let log):
                if case .failure(let error) = outcome {
                    if log {
                        await logEnrollment(error, then: "enrolling again in \(delay) (this failure again is logged at debug level)", partitions: partitions, stops: false)
                    } else {
                        logger.debug("enrollment failed again (\(error.code)); enrolling again in \(delay)")
                    }
                }
                await started(hooks)
                await wake.sleep(for: delay)
                return false
            case .stop(let log):
                if log, case .failure(let error) = outcome {
                    await logEnrollment(error, then: "tetherd does not enroll or sync until the configuration is reloaded", partitions: partitions, stops: true)
                }
                return false
            }
        }
    }

    /// An enrollment failure: one log line with its code and hint (never the key or the
    /// credential), a `sync-error` event named `enrollment_<code>`, and the error hook.
    private func logEnrollment(_ error: EnrollmentError, then: String, partitions: PartitionRegistry, stops: Bool) async {
        let line = "enrollment failed: \(error.message) (\(error.code)\(error.httpStatus.map { ", HTTP \($0)" } ?? "")); \(then); hint: \(error.hint)"
        if stops { logger.error("\(line)") } else { logger.warning("\(line)") }
        let report = SyncErrorReport(
            partition: "", store: "", code: nil, name: "enrollment_\(error.code)", message: error.message, action: stops ? "fatal" : "transient")
        await announce(report, partitions: partitions)
    }

    /// READY=1, the first time.
    private func started(_ hooks: Hooks) async {
        if machine.sessionsStarted() { await hooks.ready() }
    }

    /// A reload added `controller`: the connection's task group runs it now, or the next
    /// connection with the others.
    func partitionAdded(_ controller: PartitionController) {
        switch machine.partitionAdded(controller) {
        case .start(let controller, let additions): additions.yield(controller)
        case .later: break
        }
    }

    /// `retry-now`: ends the reconnect (or enrollment) backoff at once; false when none runs
    /// (connected, connecting, or stopped until a reload: a retry would meet the same error).
    func retryNow() -> Bool {
        guard machine.isBackingOff else { return false }
        wake.signal()
        return true
    }

    /// The configuration was reloaded: a changed server, or a stop, closes the connection so the
    /// loop connects anew.
    func reloaded(serverChanged: Bool) async {
        await perform(machine.reloaded(serverChanged: serverChanged))
    }

    /// The server refused every credential the device has, and it may enroll: the next attempt
    /// enrolls (``PartitionRegistry/takeCredentialRefusal()``).
    func reenrollmentDue() async {
        await perform(machine.reenrollmentDue())
    }

    private func perform(_ action: StateMachine<SyncConnection, PartitionController>.ReloadAction) async {
        switch action {
        case .none:
            return
        case .wake:
            wake.signal()
        case .closeAndWake(let connection, let additions):
            additions.finish()
            await connection.close()
            wake.signal()
        }
    }

    /// A connection-level error the whole agent must follow (105 stops syncing until a reload).
    func connectionFailed(_ error: SyncError, serverURL: String) {
        switch machine.connectionFailed(error) {
        case .ignore:
            return
        case .logStop(let error):
            logger.error(
                "error \(error.code.rawValue) (\(error.code.name)): \(error.message); syncing with \(serverURL) stops until the configuration is reloaded; \(error.hint)",
                metadata: ["tether.error_code": .stringConvertible(error.code.rawValue), "message_id": .string(TetherMessageID.protocolMismatch.rawValue)])
        }
    }

    /// The watchdog's check: false once an attempt has hung for ``attemptLimit(_:)`` (a
    /// WebSocket upgrade whose connection closed before the answer never completes in the
    /// client library: the watchdog then has systemd restart the daemon — docs/reliability.md).
    func isMakingProgress(limit: Duration, serverURL: String) -> Bool {
        let attemptLimit = Self.attemptLimit(limit)
        switch machine.watchdogCheck(at: .now, limit: attemptLimit) {
        case .healthy:
            return true
        case .hung(let report):
            if report {
                logger.error(
                    "the connection attempt to \(serverURL) has hung for more than \(attemptLimit); watchdog pings stop so that systemd restarts tetherd")
            }
            return false
        }
    }

    /// How long a connection attempt may take before it counts as hung: never less than 30 s
    /// (a TCP connect gives up after 10 s, an upgrade answer takes milliseconds).
    static func attemptLimit(_ watchdogLimit: Duration) -> Duration { max(watchdogLimit, .seconds(30)) }

    /// A sync error of the whole connection: an event, and the error hook of `[events]`.
    private func announce(_ report: SyncErrorReport, partitions: PartitionRegistry) async {
        events.syncError(report, settings: await partitions.configuration().events)
    }
}
