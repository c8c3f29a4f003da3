import Hummingbird
import HummingbirdCore

extension HTTPServerBuilder {
    /// The sync listener: HTTP/1 with the `/sync` WebSocket upgrade (``SyncListenerChannel``),
    /// optionally behind TLS whose context comes from `tls` for every new connection, every
    /// connection guarded.
    static func guardedSync(
        endpoint: SyncEndpoint, socket: SyncSocketConfiguration, tls: TLSContextBox?,
        admission: ConnectionAdmission, adminGate: AdminTokenGate
    ) -> HTTPServerBuilder {
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [HTTPPhaseWatcher(adminGate: adminGate, admission: admission)])
        return .init { responder in
            let sync = SyncListenerChannel(responder: responder, http1: http1, endpoint: endpoint, socket: socket)
            guard let tls else { return GuardedChannel(base: sync, admission: admission) }
            return GuardedChannel(base: ReloadableTLSChannel(base: sync, box: tls), admission: admission)
        }
    }
}
