import Logging
import ServiceLifecycle
import TetherTOML
import UnixSignals

/// Reloads users, tokens, grants and `client_recovery` on SIGHUP, then re-checks every
/// bound session (203 for a token no longer accepted, 206 for a revoked grant). A config
/// file with problems is logged and the running configuration kept.
struct ReloadService: Service {
    let configPath: String
    let running: ServerConfiguration
    let control: ServerControl
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
        if new.listen != running.listen || new.dataDirectory != running.dataDirectory || new.tls != running.tls {
            logger.warning("listen, data_dir and tls_* changes take effect at the next start")
        }
        let snapshot = await control.policy.reload(
            users: loaded.users, adminToken: loaded.adminToken, configuredGrants: new.grants, configuredRecovery: new.clientRecovery)
        let notified = await control.recheckSessions(snapshot)
        logger.notice("configuration reloaded", metadata: [
            "users": "\(new.users.count)", "grants": "\(new.grants.count)", "sessions_notified": "\(notified)",
        ])
    }
}
