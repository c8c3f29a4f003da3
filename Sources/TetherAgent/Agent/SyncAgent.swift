import Foundation
public import Logging
import TetherSyncClient
import TetherControl
import TetherProtocol
import TetherStore
public import TetherSystemd

/// The agent: one connection to the server carrying a session per partition, reconnected
/// with backoff; reloads; the control socket's commands; status for systemd.
public actor SyncAgent {
    var configuration: AgentConfiguration
    public nonisolated let stateDatabase: AgentStateDatabase
    public nonisolated let logger: Logger
    let notifier: SystemdNotifier
    var controllers: [PartitionName: PartitionController] = [:]
    var connection: SyncConnection?
    /// Set while a connection attempt has not completed its WebSocket upgrade yet.
    var connectingSince: ContinuousClock.Instant?
    var reportedHungAttempt = false
    var sessionCounter: SessionID = 0
    /// Set by a connection-level error that needs a reload (105).
    var connectionStopped: SyncError?
    var connectionBackoff = Backoff()
    /// The agent closes the connection itself (a reload changed the server): not a sync error.
    var reconnectRequested = false
    /// Controllers added by a reload while connected: the connection's task group picks them up.
    var additions: AsyncStream<PartitionController>.Continuation?
    /// Signals status changes to the status task (STATUS=, READY=).
    nonisolated let statusSignal: AsyncStream<Void>.Continuation
    let statusSignals: AsyncStream<Void>
    var readySent = false
    /// Ends a reconnect backoff early (a reload) or the wait after a fatal connection error.
    nonisolated let connectionWake = WakeSignal()
    /// Wakes the device report loop when a partition's status changed.
    nonisolated let reportWake = WakeSignal()
    /// Connection events and last-synced times for `tetherctl metrics` and `metrics_textfile`.
    public nonisolated let metrics: AgentMetrics
    /// Every event, for `tetherctl events` and the error hook (docs/events.md).
    public nonisolated let events: AgentEvents

    public init(configuration: AgentConfiguration, logger: Logger, notifier: SystemdNotifier = SystemdNotifier()) throws {
        self.configuration = configuration
        self.logger = logger
        self.notifier = notifier
        try FileManager.default.createDirectory(atPath: configuration.stateDir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
        try FileManager.default.createDirectory(atPath: configuration.storesDir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o770])
        self.stateDatabase = try AgentStateDatabase(path: configuration.stateDatabasePath)
        let metrics = AgentMetrics()
        self.metrics = metrics
        let journal: EventJournal?
        do {
            journal = try EventJournal(path: configuration.eventJournalPath)
        } catch {
            logger.warning("cannot open the event journal \(configuration.eventJournalPath) (\(error)); events are numbered from 1 and kept in memory only")
            journal = nil
        }
        let log = EventLog(journal: journal) { problem in logger.warning("\(problem)") }
        self.events = AgentEvents(log: log, metrics: metrics, serverURL: configuration.server.url, workingDirectory: configuration.stateDir)
        (statusSignals, statusSignal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        // Before any partition binds: a state directory from another machine must not sync
        // under identities that machine still uses.
        try IdentityForgetting.checkMachine(
            configuration: configuration, stateDatabase: stateDatabase, logger: logger, events: events, metrics: metrics)
    }

    /// Creates the partitions' controllers (paused ones stay paused across restarts).
    func startControllers() {
        for settings in configuration.partitions where controllers[settings.name] == nil {
            controllers[settings.name] = makeController(settings)
        }
    }

    /// A controller for `settings`: a partition paused by `tetherctl pause` stays paused, and its
    /// last error is shown again after a restart.
    func makeController(_ settings: PartitionSettings) -> PartitionController {
        let persisted: PartitionStatusRow
        do {
            persisted = try stateDatabase.status(of: settings.name)
        } catch {
            // Syncing a partition an operator paused is the lesser harm than never syncing it.
            logger.error(
                "cannot read partition \(settings.name)'s status (pause, last error) from the state database \(stateDatabase.path): \(error); it starts unpaused",
                metadata: ["tether.partition": .string(settings.name.rawValue)])
            persisted = PartitionStatusRow(name: settings.name)
        }
        return PartitionController(settings: settings, context: self, persisted: persisted)
    }

    /// Runs until cancelled: the connection loop, the status task and the error hook's runs.
    public func run() async {
        startControllers()
        let hooks = ErrorHookService(events: events, clock: ContinuousClock(), logger: logger, metrics: metrics)
        let releaser = IdleStoreReleaser(clock: ContinuousClock()) { await self.openStores() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.statusLoop() }
            group.addTask { await self.connectionLoop() }
            group.addTask { await hooks.run() }
            group.addTask { await releaser.run() }
            await group.next()
            group.cancelAll()
        }
        events.finish()
    }

    /// The partitions' stores open now (for the ``IdleStoreReleaser``).
    func openStores() async -> [any IdleReleasable] {
        var stores: [any IdleReleasable] = []
        for controller in controllers.values {
            if let store = await controller.store { stores.append(store) }
        }
        return stores
    }

    // MARK: Status

    public func statuses() async -> [PartitionStatus] {
        var result: [PartitionStatus] = []
        for name in controllers.keys.sorted() {
            if let controller = controllers[name] { result.append(await controller.status) }
        }
        return result
    }

    private func statusLoop() async {
        var last = ""
        for await _ in statusSignals {
            let current = await statuses()
            metrics.observe(current, at: Date())
            let summary = PartitionStatus.summary(current)
            if summary != last {
                last = summary
                notifier.status(summary)
            }
        }
    }

    /// Sends READY=1 once every partition's session has started (bound, offline or waiting).
    func markStarted() {
        guard !readySent else { return }
        readySent = true
        notifier.ready()
        notifier.status(PartitionStatus.summary([]))
        logger.notice("tetherd \(TetherVersion.release) ready: \(configuration.partitions.count) partitions, server \(configuration.server.url)")
        statusSignal.yield()
    }

    /// The watchdog's health check: no partition wedged in one event for `limit`, and no
    /// connection attempt hung for longer than ``connectAttemptLimit(_:)`` (a WebSocket
    /// upgrade whose connection closed before the answer never completes in the client
    /// library: the watchdog then has systemd restart the daemon — docs/reliability.md).
    public func isMakingProgress(limit: Duration) async -> Bool {
        if let since = connectingSince, ContinuousClock.now - since > Self.connectAttemptLimit(limit) {
            if !reportedHungAttempt {
                reportedHungAttempt = true
                logger.error(
                    "the connection attempt to \(configuration.server.url) has hung for more than \(Self.connectAttemptLimit(limit)); watchdog pings stop so that systemd restarts tetherd")
            }
            return false
        }
        for controller in controllers.values where !(await controller.isMakingProgress(limit: limit)) { return false }
        return true
    }

    /// How long a connection attempt may take before it counts as hung: never less than 30 s
    /// (a TCP connect gives up after 10 s, an upgrade answer takes milliseconds).
    static func connectAttemptLimit(_ watchdogLimit: Duration) -> Duration { max(watchdogLimit, .seconds(30)) }
}

extension SyncAgent: AgentContext {
    func configuration() async -> AgentConfiguration { configuration }

    func nextSessionID() async -> SessionID {
        sessionCounter &+= 1
        return sessionCounter
    }

    func readToken() async throws -> String {
        let path = configuration.server.tokenFile
        if let problem = AgentConfiguration.tokenFileProblem(path) { throw AgentError.token(problem) }
        let text = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw AgentError.token("\(path) is empty") }
        return text
    }

    nonisolated func statusChanged() {
        statusSignal.yield()
        reportWake.signal()
    }

    func connectionFailed(_ error: SyncError) async {
        guard error.action == .fatal, connectionStopped == nil else { return }
        connectionStopped = error
        logger.error(
            "error \(error.code.rawValue) (\(error.code.name)): \(error.message); syncing with \(configuration.server.url) stops until the configuration is reloaded; \(error.hint)",
            metadata: ["tether.error_code": .stringConvertible(error.code.rawValue), "message_id": .string(TetherMessageID.protocolMismatch.rawValue)])
    }

    nonisolated var fetcher: any ServerStateFetcher { AgentStateFetcher(agent: self) }

    nonisolated var healer: any HealContributor { AgentHealContributor(agent: self) }

    nonisolated var resetLoopLimits: ResetLoopGuard.Limits { FaultInjection.resetLoopLimits }
}
