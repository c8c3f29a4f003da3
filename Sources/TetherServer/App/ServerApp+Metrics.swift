import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization
import TetherProtocol
import TetherSystemd

extension ServerApp {
    /// The `metrics_listen` listener: only `/healthz` and `/metrics`, plain HTTP, no token.
    static func metricsApplication(
        _ address: ListenAddress, service: SyncService, admission: ConnectionAdmission, logger: Logger,
        onReady: @escaping @Sendable (ListenAddress) async -> Void
    ) -> some Service {
        let router = Router()
        ObservabilityRoutes(service: service, metrics: true, detailedHealth: true).register(on: router)
        return Application(
            router: router, server: .guardedHTTP1(admission: admission),
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: "tether-server/\(TetherVersion.release)"),
            onServerRunning: { channel in
                let bound = ListenAddress(host: address.host, port: channel.localAddress?.port ?? address.port)
                logger.notice("metrics and health check listening on \(bound) (/metrics, /healthz)")
                await onReady(bound)
            },
            logger: logger)
    }
}

/// The server's watchdog check: progress means the storage answered a read and the session
/// hub answered, each within the time the watchdog loop waits for them. A storage or actor
/// that hangs stops the pings, so systemd restarts the server after `WatchdogSec=`; a storage
/// that answers with an error does not (that is `/healthz`'s 503, for the load balancer), but
/// the check logs when its reads start failing and when they answer again.
final class ServerHealthCheck: HealthCheck, Sendable {
    let service: SyncService
    let logger: Logger
    /// Whether the last read failed, so a failing storage is logged once, not at every ping.
    private let failing = Mutex(false)

    init(service: SyncService, logger: Logger) {
        self.service = service
        self.logger = logger
    }

    func isMakingProgress() async -> Bool {
        do {
            _ = try await service.storage.policy.flags()
            if recordFailing(false) { logger.notice("the storage answers reads again") }
        } catch {
            if recordFailing(true) {
                logger.error("the storage fails reads; /healthz answers 503 until it recovers", metadata: [
                    "error": "\(SyncService.oneLine(error))",
                ])
            }
        }
        _ = await service.hub.connectionCount
        return true
    }

    /// Records whether the storage's last read failed; true when that changed.
    private func recordFailing(_ now: Bool) -> Bool {
        failing.withLock { before in
            defer { before = now }
            return before != now
        }
    }
}
