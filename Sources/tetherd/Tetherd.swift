import ArgumentParser
import Foundation
import Logging
import TetherAgent
import TetherCommandLine
import TetherControl
import TetherProtocol
import TetherStore
import TetherSystemd
import TetherTOML
import ServiceLifecycle
import UnixSignals

@main
struct Tetherd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tetherd",
        abstract: "Tether sync agent: keeps SQLite stores in sync with tether-server.",
        discussion: """
            Runs under systemd (Type=notify). Reads its configuration from --config; SIGHUP \
            reloads it, SIGTERM stops the agent. Every key is described in docs/configuration.md; \
            logging (levels, journald fields, destinations) in docs/logging.md.
            """,
        version: "tetherd \(TetherVersion.release) (sync protocol \(TetherVersion.syncProtocol))"
    )

    @Option(name: .long, help: "Configuration file.")
    var config: String = "/etc/tether/tetherd.toml"

    @Flag(name: .long, help: "Validate the configuration and exit (0 valid, 2 invalid).")
    var checkConfig = false

    @Flag(
        name: .long,
        help: """
            Forget the sync identity of every configured partition's store and the recorded machine id, keeping rows and \
            unsynced changes, and exit: run it (with tetherd stopped) before taking a disk image that devices are built from.
            """)
    var forgetIdentities = false

    @Option(
        name: .long,
        help: """
            Where log records go: auto (journald when run by systemd, else stderr), journal or stderr.
            """)
    var logDestination: LogDestination = .auto

    static func main() async { await CommandLineExit.main(Self.self) }

    func run() async throws {
        // Before anything opens SQLite (the configuration check opens nothing, but the agent does).
        let lean = StoreMemory.configureProcess()
        if checkConfig {
            let loaded: AgentConfiguration
            do {
                loaded = try AgentConfiguration.load(path: config)
            } catch {
                for problem in error.problems { FileHandle.standardError.write(Data("\(problem)\n".utf8)) }
                throw ExitCode(2)
            }
            // The subscriptions against the stores that exist (their schemas).
            let subscriptions = loaded.subscriptionProblems()
            for note in subscriptions.skipped { FileHandle.standardError.write(Data("\(config): warning: \(note)\n".utf8)) }
            for problem in subscriptions.problems { FileHandle.standardError.write(Data("\(config): \(problem)\n".utf8)) }
            if !subscriptions.problems.isEmpty { throw ExitCode(2) }
            print("\(config): ok (\(loaded.partitions.count) partition\(loaded.partitions.count == 1 ? "" : "s"))")
            if let trust = loaded.server.trustSummary { print("\(config): \(trust)") }
            if let warning = Self.cleartextWarning(loaded) { FileHandle.standardError.write(Data("\(config): warning: \(warning)\n".utf8)) }
            return
        }
        let configuration: AgentConfiguration
        do {
            configuration = try AgentConfiguration.load(path: config)
        } catch {
            for problem in error.problems { FileHandle.standardError.write(Data("tetherd: \(problem)\n".utf8)) }
            throw ExitCode(2)
        }
        if forgetIdentities { return try Self.forgetIdentities(configuration) }
        // Nothing the agent creates (state database, stores, backups, quarantined stores,
        // staging copies, their -wal/-shm) is for other users, whatever umask it was started
        // with; the unit sets UMask=0007 too.
        umask(0o007)
        let decision = TetherLogging.bootstrap(identifier: "tetherd", level: configuration.logLevel, destination: logDestination)
        let logger = Logger(label: "tether.agent")
        logger.info("log destination: \(decision)")
        if !lean { logger.warning("SQLite was initialised before its memory settings could be applied; idle stores use more memory") }
        logger.notice(
            "tetherd \(TetherVersion.release) starting",
            metadata: ["tether.version": "\(TetherVersion.release)", "tether.config": "\(config)"])
        if let warning = Self.cleartextWarning(configuration) { logger.warning("\(warning)") }
        let agent: SyncAgent
        do {
            try FileManager.default.createDirectory(
                atPath: (configuration.controlSocket as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o750])
            agent = try SyncAgent(configuration: configuration, logger: logger)
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }
        let control = ControlServer(
            path: configuration.controlSocket, handler: agent, logger: logger, operatorGroup: configuration.control.operatorGroup)
        // A session busy with one event for longer than the watchdog interval is wedged.
        let progressLimit = SystemdNotifier.watchdogInterval ?? .seconds(30)
        let watchdog = WatchdogService(
            healthCheck: ClosureHealthCheck { await agent.isMakingProgress(limit: progressLimit) }, logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: AgentService(agent: agent)), .init(service: control), .init(service: watchdog),
        ]
        if let textfile = configuration.metricsTextfile {
            services.append(.init(service: MetricsTextfileService(
                path: textfile, clock: ContinuousClock(), logger: logger, render: { try await agent.metricsExposition() })))
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            logger.critical("stopped: \(error)")
            throw ExitCode(1)
        }
        logger.notice("tetherd stopped")
    }
}

extension Tetherd {
    /// The token would cross the network in clear (`ws://` to another machine).
    static func cleartextWarning(_ configuration: AgentConfiguration) -> String? {
        CleartextCredentials.exposedHost(in: configuration.server.url).map {
            "the token goes in clear to \($0) (server.url \(configuration.server.url)): anyone on the path can read it; use wss:// (docs/operations.md)"
        }
    }

    /// `--forget-identities`: refused while tetherd runs (its control socket answers).
    static func forgetIdentities(_ configuration: AgentConfiguration) throws {
        do {
            _ = try ControlClient(socketPath: configuration.controlSocket, timeout: .seconds(2)).send(ControlRequest(command: .status))
            FileHandle.standardError.write(Data("tetherd: tetherd is running (\(configuration.controlSocket) answers); stop it first\n".utf8))
            throw ExitCode(1)
        } catch let error as ControlClientError where !error.nobodyListens {
            // A daemon too busy to answer, or a socket this user may not use: whether tetherd
            // runs is unknown, and forgetting identities under a running daemon is not undone.
            FileHandle.standardError.write(Data("tetherd: cannot tell whether tetherd is running (\(error)); stop it first\n".utf8))
            throw ExitCode(1)
        } catch is ControlClientError {
            // Nobody listens: tetherd is not running.
        }
        do {
            let forgotten = try IdentityForgetting.forget(configuration.partitions)
            if FileManager.default.fileExists(atPath: configuration.stateDatabasePath) {
                try AgentStateDatabase(path: configuration.stateDatabasePath).recordMachine(nil)
            }
            let names = forgotten.map(\.rawValue).joined(separator: ", ")
            print("sync identities forgotten: \(forgotten.count)\(forgotten.isEmpty ? "" : " (\(names))"); each store binds as a new device at the next start, keeping its unsynced changes")
        } catch {
            FileHandle.standardError.write(Data("tetherd: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

extension LogDestination: ExpressibleByArgument {}
