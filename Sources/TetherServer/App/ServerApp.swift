import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import TetherProtocol
import TetherSystemd
import UnixSignals
import TetherTOML

/// The running server: storage, policy, the sync endpoint on the devices' listener (`listen`),
/// the admin API and console on the admin listener (`admin_listen`), plus compaction and
/// SIGHUP reload, as one swift-service-lifecycle `ServiceGroup` that shuts
/// down gracefully on SIGTERM/SIGINT (in-flight uploads commit, sessions are closed).
package enum ServerApp {
    package struct Options: Sendable {
        package var configPath: String
        package var allowBreakingSchema: Bool
        package var compactionInterval: Duration
        /// How often an instance sharing a PostgreSQL database re-reads everything (besides notifications).
        package var resyncInterval: Duration = .seconds(5)
        package var now: @Sendable () -> Date
        /// Where watchdog pings go (systemd's `NOTIFY_SOCKET`).
        package var notifier: SystemdNotifier
        /// The watchdog timeout (`WATCHDOG_USEC`); nil: no watchdog pings.
        package var watchdogInterval: Duration?
        /// Called with the address `metrics_listen` bound (port 0 picks a free one).
        package var onMetricsReady: @Sendable (ListenAddress) async -> Void
        /// Called with `true` when a SIGHUP reload starts and `false` when it is over (applied
        /// or refused): the executable tells systemd `RELOADING=1` and `READY=1`.
        package var reloading: @Sendable (Bool) -> Void

        package init(
            configPath: String, allowBreakingSchema: Bool = false, compactionInterval: Duration = .seconds(3600),
            now: @escaping @Sendable () -> Date = { Date() }, reloading: @escaping @Sendable (Bool) -> Void = { _ in },
            notifier: SystemdNotifier = SystemdNotifier(), watchdogInterval: Duration? = WatchdogConfiguration.current(),
            onMetricsReady: @escaping @Sendable (ListenAddress) async -> Void = { _ in }
        ) {
            self.configPath = configPath
            self.allowBreakingSchema = allowBreakingSchema
            self.compactionInterval = compactionInterval
            self.now = now
            self.notifier = notifier
            self.watchdogInterval = watchdogInterval
            self.onMetricsReady = onMetricsReady
            self.reloading = reloading
        }
    }

    /// Why the server could not start: a configuration problem (exit 2) or anything else (exit 1).
    package enum StartError: Error, CustomStringConvertible {
        case configuration(ConfigError)
        case runtime(String)

        package var description: String {
            switch self {
            case .configuration(let error): error.description
            case .runtime(let message): message
            }
        }
    }

    /// Runs until a graceful shutdown completes. `onReady` is called once both listeners are
    /// bound, with the addresses actually bound (the one place for readiness notification).
    package static func run(
        _ loaded: LoadedConfiguration, options: Options, logger: Logger,
        onReady: @escaping @Sendable (BoundListeners) async -> Void = { _ in }
    ) async throws {
        let configuration = loaded.configuration
        if configuration.storage.kind == .postgresql {
            try await runOnPostgres(loaded, options: options, logger: logger, onReady: onReady)
            return
        }
        let lock: DataDirectoryLock
        let storage: SQLiteServerStorage
        do {
            lock = try DataDirectoryLock(directory: configuration.dataDirectory)
            storage = try SQLiteServerStorage(directory: configuration.dataDirectory)
        } catch {
            throw StartError.runtime("\(error)")
        }
        do {
            let service = try await prepare(loaded, storage: storage, options: options, logger: logger)
            try await serve(service, configuration: configuration, options: options, logger: logger, onReady: onReady)
        } catch {
            try? await storage.close()  // best effort: the error that stopped the server is the one to report
            throw error
        }
        try await storage.close()
        withExtendedLifetime(lock) {}
        logger.notice("tether-server stopped")
    }

    /// One instance of several sharing a PostgreSQL database: the connection pool runs beside
    /// the server for as long as it does; migrations run first (once, whichever instance
    /// starts first takes the advisory lock).
    static func runOnPostgres(
        _ loaded: LoadedConfiguration, options: Options, logger: Logger,
        onReady: @escaping @Sendable (BoundListeners) async -> Void
    ) async throws {
        let configuration = loaded.configuration
        guard let location = configuration.storage.postgres else { throw StartError.runtime("[storage] names no PostgreSQL url") }
        let lock: DataDirectoryLock
        let storage: PostgresServerStorage
        do {
            lock = try DataDirectoryLock(directory: configuration.dataDirectory)
            storage = try PostgresServerStorage(
                location: location, password: loaded.storagePassword,
                maximumStateDownloads: configuration.storage.maxStateDownloads, logger: logger)
        } catch {
            throw StartError.runtime("\(error)")
        }
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await storage.run() }
            do {
                let applied = try await storage.migrate()
                if !applied.isEmpty { logger.notice("PostgreSQL schema migrated", metadata: ["versions": "\(applied)"]) }
            } catch {
                throw StartError.runtime("cannot use the database \(location): \(error)")
            }
            logger.notice("storage: PostgreSQL \(location)")
            let notifier = PostgresNotifier(storage: storage, sender: UUID().uuidString, logger: logger)
            let service = try await prepare(loaded, storage: storage, bus: notifier, options: options, logger: logger)
            try await serve(service, configuration: configuration, options: options, logger: logger, onReady: onReady) { control in
                PostgresEventListener(
                    storage: storage, control: control, notifier: notifier, resyncInterval: options.resyncInterval, logger: logger)
            }
            group.cancelAll()
        }
        withExtendedLifetime(lock) {}
        logger.notice("tether-server stopped")
    }

    static func prepare(
        _ loaded: LoadedConfiguration, storage: any ServerStorage, bus: (any ClusterBus)? = nil, options: Options, logger: Logger
    ) async throws -> SyncService {
        let configuration = loaded.configuration
        for repair in try await storage.repairHistories() {
            logger.warning(
                "partition \(repair.partition): its history did not match its head (\(repair.problems.joined(separator: "; "))); repaired: the history is dropped and version \(repair.head.latest.version) is the base, so devices reset once and bind again",
                metadata: ["partition": "\(repair.partition)"])
        }
        var history = try await storage.schemaHistory()
        let decision: SchemaReconciliation.Decision
        do {
            decision = try SchemaReconciliation.decide(
                file: loaded.schema, fileName: configuration.schemaFile, stored: history,
                allowBreaking: options.allowBreakingSchema, now: options.now())
        } catch {
            throw StartError.configuration(error)
        }
        switch decision {
        case .keep:
            break
        case .append(let record, let breaking):
            let migration = breaking ? history.last.map { StateMigration(from: $0.schema, to: record.schema) } : nil
            try await storage.appendSchema(record, migration: migration)
            history.append(record)
            logger.notice("schema applied from schema file", metadata: ["version": "\(record.version)", "breaking": "\(breaking)"])
        case .storedIsNewer(let stored, let file):
            logger.notice("using schema version \(stored) applied at run time; \(configuration.schemaFile) has version \(file)")
        }

        let index = try await storage.reconcileFilterIndex(FilterIndexColumns(configuration.subscriptions.queryable))
        if !index.added.isEmpty || !index.dropped.isEmpty {
            logger.notice("filter index changed", metadata: [
                "added": "\(index.added.map(\.description).joined(separator: ","))",
                "dropped": "\(index.dropped.map(\.description).joined(separator: ","))", "rows_indexed": "\(index.rowsIndexed)",
            ])
        }
        var flags = try await storage.flags()
        if flags.recoveryOverride != nil, flags.recoveryOverrideConfigValue != configuration.clientRecovery {
            flags.recoveryOverride = nil
            flags.recoveryOverrideConfigValue = nil
            try await storage.setFlags(flags)
            logger.notice("client_recovery changed in the config file; it replaces the earlier `admin recovery` setting")
        }
        let policy = ServerPolicy(
            users: loaded.users, adminToken: loaded.adminToken, configuredGrants: configuration.grants,
            runtimeGrants: try await storage.runtimeGrants(), flags: flags, configuredRecovery: configuration.clientRecovery,
            schemas: SchemaRegistry(history: history), devicesAhead: configuration.devicesAhead)
        let hub = SyncHub()
        let readyFiles = configuration.readyFileSettings
        let service = SyncService(
            storage: StorageRoles(storage), hub: hub, policy: policy, bus: bus, now: options.now, logger: logger,
            globPartitionsPerUser: configuration.limits.globPartitionsPerUser,
            readyFiles: readyFiles.enabled ? ReadyFileCache(settings: readyFiles, logger: logger) : nil,
            devices: configuration.devices, maxUnindexedRows: configuration.subscriptions.maxUnindexedRows)
        let versions = try await storage.latestVersions()
        service.summary.replace(with: versions)
        // Where each partition's history ended when this process started: the restore point of
        // a database put back while the server was stopped (``HealDetection``).
        service.headsAtStart.record(versions)
        return service
    }

    static func serve(
        _ service: SyncService, configuration: ServerConfiguration, options: Options, logger: Logger,
        onReady: @escaping @Sendable (BoundListeners) async -> Void,
        extraService: (ServerControl) -> (any Service)? = { _ in nil }
    ) async throws {
        let control = ServerControl(
            service: service, configuration: configuration, now: options.now, logger: logger)
        let syncWork = SyncWorkQueue()
        let endpoint = SyncEndpoint(service: service, queue: syncWork)
        // The devices' listener: /sync, /healthz, /metrics with public_metrics; /admin and
        // /console are answered with where they are now (admin_listen).
        let router = Router(context: TetherRequestContext.self)
        router.add(middleware: AdminElsewhereMiddleware())
        ObservabilityRoutes(service: service, metrics: configuration.publicMetrics, detailedHealth: false).register(on: router)
        let admission = ConnectionAdmission(limits: configuration.limits, metrics: service.metrics, logger: logger)
        let enrollment = EnrollmentRoute(service: EnrollmentService(
            identity: service.storage.identity, policy: service.policy, now: options.now, logger: logger,
            changed: { device in
                await service.deviceChanged(device.id)
                await service.bus?.announce(.deviceChanged(device.name))
            }))
        router.post("enroll") { request, context in
            await enrollment.handle(request, peer: context.client(admission))
        }
        // New connections take the box's context; SIGHUP replaces it (ReloadService).
        var tlsBox: TLSContextBox? = nil
        if let tls = configuration.tls {
            do {
                tlsBox = TLSContextBox(try TLSContextBox.makeContext(tls))
            } catch {
                throw StartError.configuration(ConfigError(file: configuration.file, key: "tls_certificate", "cannot load TLS files: \(error)"))
            }
        }
        service.metrics.watchUnauthenticatedBytes { admission.unauthenticatedBytes }
        let server = HTTPServerBuilder.guardedSync(
            endpoint: endpoint, socket: SyncSocketConfiguration(), tls: tlsBox, admission: admission,
            adminGate: service.policy.adminGate)
        let scheme = configuration.tls == nil ? "http" : "https"
        let ready = ListenersReady(onReady)
        let app = Application(
            router: router, server: server,
            configuration: .init(
                address: .hostname(configuration.listen.host, port: configuration.listen.port),
                serverName: "tether-server/\(TetherVersion.release)"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuration.listen.port
                let bound = ListenAddress(host: configuration.listen.host, port: port)
                let metrics = configuration.publicMetrics ? ", metrics at /metrics" : ""
                logger.notice("tether-server listening on \(bound) (\(scheme), sync at /sync, enrollment at /enroll, health at /healthz\(metrics); admin API and console on admin_listen)")
                await ready.listen(bound)
            },
            logger: logger)
        // admin_listen and metrics_listen have budgets of their own: a flood of one listener
        // does not close another's connections.
        let adminAdmission = ConnectionAdmission(limits: configuration.limits, metrics: service.metrics, logger: logger)
        let admin = adminApplication(
            configuration.adminListen, control: control, service: service, tls: tlsBox, admission: adminAdmission, logger: logger,
            onReady: { await ready.admin($0) })
        let metricsAdmission = configuration.metricsListen.map { _ in
            ConnectionAdmission(limits: configuration.limits, metrics: service.metrics, logger: logger)
        }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            // Before the listener: shut down after it, so that the work of the connections it
            // closes finishes.
            .init(service: syncWork),
            .init(service: app),
            .init(service: admin),
            .init(
                service: CompactionService(control: control, interval: options.compactionInterval, clock: ContinuousClock(), logger: logger),
                successTerminationBehavior: .gracefullyShutdownGroup),
            .init(
                service: DeviceCountsService(service: service, interval: .seconds(5), clock: ContinuousClock(), logger: logger),
                successTerminationBehavior: .gracefullyShutdownGroup),
            .init(
                service: RemoteActionService(control: control, interval: .seconds(10), clock: ContinuousClock(), logger: logger),
                successTerminationBehavior: .gracefullyShutdownGroup),
            .init(
                service: ReloadService(
                    configPath: options.configPath, running: configuration, control: control, tls: tlsBox,
                    admissions: [admission, adminAdmission] + (metricsAdmission.map { [$0] } ?? []), reloading: options.reloading, logger: logger),
                successTerminationBehavior: .gracefullyShutdownGroup),
            .init(
                service: WatchdogService(
                    interval: options.watchdogInterval, notifier: options.notifier, healthCheck: ServerHealthCheck(service: service, logger: logger),
                    clock: ContinuousClock(), logger: logger),
                successTerminationBehavior: .gracefullyShutdownGroup),
        ]
        if let cache = service.readyFiles {
            let policy = service.policy
            let builder = ReadyFileBuilder(
                storage: service.storage.history, currentSchema: { await policy.snapshot.schemas.current }, settings: cache.settings)
            services.append(.init(service: ReadyFileService(cache: cache, builder: builder, metrics: service.metrics, logger: logger)))
        }
        if let extra = extraService(control) { services.insert(.init(service: extra), at: 0) }
        if let metricsListen = configuration.metricsListen, let metricsAdmission {
            services.append(.init(service: metricsApplication(
                metricsListen, service: service, admission: metricsAdmission, logger: logger, onReady: options.onMetricsReady)))
        }
        let group = ServiceGroup(configuration: .init(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
