import Logging
import NIOSSL
import ServiceLifecycle
import TetherSystemd
import TetherTOML
import UnixSignals

/// Reloads users, tokens, grants, `client_recovery`, `log_level`, `[limits]` and the TLS
/// certificate and key on SIGHUP, then re-checks every bound session (203 for a token no
/// longer accepted, 206 for a revoked grant). systemd hears `RELOADING=1` before and `READY=1` after. A renewed
/// certificate is used for new connections; connections already open keep theirs. A config
/// file with problems, or TLS files that cannot be loaded, are logged and the running
/// configuration (or certificate) kept.
struct ReloadService: Service {
    let configPath: String
    let running: ServerConfiguration
    let control: ServerControl
    /// The TLS context of new connections; nil when the server started without TLS.
    let tls: TLSContextBox?
    /// `[limits]` of the devices' listener, the admin listener and `metrics_listen`.
    let admissions: [ConnectionAdmission]
    /// `true` when a reload starts, `false` when it is over (systemd's RELOADING=1 / READY=1).
    var reloading: @Sendable (Bool) -> Void = { _ in }
    let logger: Logger

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            await reload()
        }
    }

    func reload() async {
        reloading(true)
        defer { reloading(false) }
        let loaded: LoadedConfiguration
        do {
            loaded = try LoadedConfiguration.load(path: configPath)
        } catch {
            for problem in error.problems {
                logger.error("reload refused: \(problem.description)")
            }
            return
        }
        let new = loaded.configuration
        if new.listen != running.listen || new.adminListen != running.adminListen || new.dataDirectory != running.dataDirectory || (new.tls == nil) != (running.tls == nil)
            || new.metricsListen != running.metricsListen || new.publicMetrics != running.publicMetrics
        {
            logger.warning("listen, admin_listen, metrics_listen, public_metrics, data_dir and turning TLS on or off take effect at the next start")
        }
        if admissions.contains(where: { $0.limits != new.limits }) {
            for admission in admissions { admission.replace(new.limits) }
            logger.notice("[limits] reloaded; they apply from each connection's next read or timer")
        }
        if let level = TetherLogLevel(rawValue: new.logLevel.rawValue), level != TetherLogging.level {
            TetherLogging.level = level
            logger.notice("log level is now \(level.rawValue)")
        }
        if let tls, let files = new.tls {
            do {
                tls.replace(with: try TLSContextBox.makeContext(files))
                logger.notice("TLS certificate and key reloaded from \(files.certificate); new connections use them, open connections keep theirs")
            } catch {
                logger.error("TLS certificate not reloaded, the running one is kept: cannot load \(files.certificate) and \(files.key): \(error)")
            }
        }
        let snapshot = await control.policy.reload(
            users: loaded.users, adminToken: loaded.adminToken, configuredGrants: new.grants, configuredRecovery: new.clientRecovery,
            devicesAhead: new.devicesAhead)
        let notified = await control.recheckSessions(snapshot)
        logger.notice("configuration reloaded", metadata: [
            "users": "\(new.users.count)", "grants": "\(new.grants.count)", "sessions_notified": "\(notified)",
        ])
    }
}
