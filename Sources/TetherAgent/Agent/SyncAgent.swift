import Foundation
import Logging
import TetherSyncClient
import TetherControl
import TetherProtocol
import TetherStore
import TetherSystemd

/// The agent: the connection to the server (``AgentConnection``) and the partitions by name
/// (``PartitionRegistry``), put together; reloads; the control socket's commands; status for
/// systemd; device reports.
package actor SyncAgent {
    package nonisolated let stateDatabase: AgentStateDatabase
    package nonisolated let logger: Logger
    let notifier: SystemdNotifier
    /// The partitions by name and the running configuration (the controllers' context).
    nonisolated let partitions: PartitionRegistry
    /// The one connection to the server, and its reconnects.
    nonisolated let connection: AgentConnection
    /// Signals status changes to the status task (STATUS=, READY=).
    nonisolated let statusSignal: AsyncStream<Void>.Continuation
    let statusSignals: AsyncStream<Void>
    /// Wakes the device report loop when a partition's status changed.
    nonisolated let reportWake: WakeSignal
    /// Connection events and last-synced times for `tetherctl metrics` and `metrics_textfile`.
    package nonisolated let metrics: AgentMetrics
    /// Every event, for `tetherctl events` and the error hook (docs/events.md).
    package nonisolated let events: AgentEvents
    /// When this run started: the uptime of a diagnostics report.
    nonisolated let startedAt = (date: Date(), instant: ContinuousClock.now)
    /// The remote actions answered in this run, so that one the server sends again (on a new
    /// connection, unanswered on the last) is answered without running twice.
    var remoteActionMemory = RemoteActionMemory()

    package init(configuration: AgentConfiguration, logger: Logger, notifier: SystemdNotifier = SystemdNotifier()) throws {
        self.logger = logger
        self.notifier = notifier
        try FileManager.default.createDirectory(atPath: configuration.stateDir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
        try FileManager.default.createDirectory(atPath: configuration.storesDir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o770])
        let stateDatabase = try AgentStateDatabase(path: configuration.stateDatabasePath)
        self.stateDatabase = stateDatabase
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
        let events = AgentEvents(log: log, metrics: metrics, serverURL: configuration.server.url, workingDirectory: configuration.stateDir)
        self.events = events
        let (statusSignals, statusSignal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (self.statusSignals, self.statusSignal) = (statusSignals, statusSignal)
        let reportWake = WakeSignal()
        self.reportWake = reportWake
        let connection = AgentConnection(logger: logger, metrics: metrics, events: events)
        self.connection = connection
        partitions = PartitionRegistry(
            configuration: configuration, stateDatabase: stateDatabase, logger: logger, events: events, connection: connection,
            onStatusChange: {
                statusSignal.yield()
                reportWake.signal()
            })
        // Before any partition binds: a state directory from another machine must not sync
        // under identities that machine still uses.
        try IdentityForgetting.checkMachine(
            configuration: configuration, stateDatabase: stateDatabase, logger: logger, events: events, metrics: metrics)
    }

    /// Runs until cancelled: the connection loop, the status task and the error hook's runs.
    package func run() async {
        await partitions.startControllers()
        let hooks = ErrorHookService(events: events, clock: ContinuousClock(), logger: logger, metrics: metrics)
        let partitions = self.partitions
        let releaser = IdleStoreReleaser(clock: ContinuousClock()) { await partitions.openStores() }
        let connectionHooks = AgentConnection.Hooks(
            ready: { await self.markStarted() }, whileConnected: { connection in await self.reportLoop(connection) },
            answer: { action in await self.answer(action) })
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.statusLoop() }
            group.addTask { await self.connection.run(partitions: partitions, hooks: connectionHooks) }
            group.addTask { await hooks.run() }
            group.addTask { await releaser.run() }
            await group.next()
            group.cancelAll()
        }
        events.finish()
    }

    // MARK: Status

    package func statuses() async -> [PartitionStatus] { await partitions.statuses() }

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

    /// READY=1: every partition's session has started (bound, offline or waiting); the
    /// connection says when, once.
    private func markStarted() async {
        let configuration = await partitions.configuration()
        notifier.ready()
        notifier.status(PartitionStatus.summary([]))
        logger.notice("tetherd \(TetherVersion.release) ready: \(configuration.partitions.count) partitions, server \(configuration.server.url)")
        statusSignal.yield()
    }

    /// The watchdog's health check: no connection attempt hung for longer than
    /// ``AgentConnection/attemptLimit(_:)``, and no partition wedged in one event for `limit`.
    package func isMakingProgress(limit: Duration) async -> Bool {
        let url = await partitions.configuration().server.url
        guard await connection.isMakingProgress(limit: limit, serverURL: url) else { return false }
        return await partitions.partitionsMakingProgress(limit: limit)
    }
}
