import Hummingbird
import HummingbirdCore

extension HTTPServerBuilder {
    /// The admin listener (`admin_listen`): HTTP/1, behind TLS (the same reloadable context as
    /// the devices' listener) when `tls` is set, every connection guarded by its own
    /// ``ConnectionAdmission``; a request with the admin token or a console session counts as
    /// authenticated, as on the devices' listener.
    static func guardedAdmin(
        tls: TLSContextBox?, admission: ConnectionAdmission, adminGate: AdminTokenGate, console: ConsoleSessions
    ) -> HTTPServerBuilder {
        .init { responder in
            let http = HTTP1Channel(
                responder: responder, configuration: .init(additionalChannelHandlers: [HTTPPhaseWatcher(adminGate: adminGate, console: console, admission: admission)]))
            guard let tls else { return GuardedChannel(base: http, admission: admission) }
            return GuardedChannel(base: ReloadableTLSChannel(base: http, box: tls), admission: admission)
        }
    }
}
