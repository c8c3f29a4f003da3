import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization
import TetherProtocol

extension ServerApp {
    /// The addresses the devices' listener (`listen`) and the admin listener (`admin_listen`)
    /// bound (port 0 picks a free one).
    package struct BoundListeners: Sendable, Hashable {
        package var listen: ListenAddress
        package var admin: ListenAddress
    }

    /// The admin listener (`admin_listen`): `/admin`, `/console`, `/healthz` (with its reason
    /// when unavailable) and `/metrics`, with a ``ConnectionAdmission`` of its own so a flood of
    /// the devices' listener does not touch it; TLS as the devices' listener.
    static func adminApplication(
        _ address: ListenAddress, control: ServerControl, service: SyncService, tls: TLSContextBox?, admission: ConnectionAdmission,
        logger: Logger, onReady: @escaping @Sendable (ListenAddress) async -> Void
    ) -> some Service {
        let router = Router(context: AdminRequestContext.self)
        AdminRoutes(control: control, dataDirectory: control.configuration.dataDirectory).register(on: router)
        ConsoleRoutes(control: control, sessions: service.policy.consoleSessions, secure: tls != nil, admission: admission).register(on: router)
        ObservabilityRoutes(service: service, metrics: true, detailedHealth: true).register(on: router)
        let scheme = tls == nil ? "http" : "https"
        return Application(
            router: router,
            server: .guardedAdmin(tls: tls, admission: admission, adminGate: service.policy.adminGate, console: service.policy.consoleSessions),
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: "tether-server/\(TetherVersion.release)"),
            onServerRunning: { channel in
                let bound = ListenAddress(host: address.host, port: channel.localAddress?.port ?? address.port)
                logger.notice("admin listening on \(bound) (\(scheme), admin API at /admin, console at /console, health at /healthz, metrics at /metrics)")
                await onReady(bound)
            },
            logger: logger)
    }
}

/// Gathers the addresses both listeners bound: the server is ready (systemd's `READY=1`) once
/// both are, not when the first is.
final class ListenersReady: Sendable {
    private let bound = Mutex<(listen: ListenAddress?, admin: ListenAddress?, told: Bool)>((nil, nil, false))
    private let onReady: @Sendable (ServerApp.BoundListeners) async -> Void

    init(_ onReady: @escaping @Sendable (ServerApp.BoundListeners) async -> Void) { self.onReady = onReady }

    func listen(_ address: ListenAddress) async {
        let due = bound.withLock { state -> ServerApp.BoundListeners? in
            state.listen = address
            return Self.due(&state)
        }
        await tell(due)
    }

    func admin(_ address: ListenAddress) async {
        let due = bound.withLock { state -> ServerApp.BoundListeners? in
            state.admin = address
            return Self.due(&state)
        }
        await tell(due)
    }

    private func tell(_ listeners: ServerApp.BoundListeners?) async {
        if let listeners { await onReady(listeners) }
    }

    private static func due(_ state: inout (listen: ListenAddress?, admin: ListenAddress?, told: Bool)) -> ServerApp.BoundListeners? {
        guard !state.told, let listen = state.listen, let admin = state.admin else { return nil }
        state.told = true
        return ServerApp.BoundListeners(listen: listen, admin: admin)
    }
}
