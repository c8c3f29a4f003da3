import TetherServer
import TetherSystemd

/// Tells systemd (`Type=notify`) that the server is ready once its listener is bound, with a
/// one-line `STATUS=`; `stopping()` goes out when the service group begins to shut down.
/// Quietly does nothing when not run by systemd (no `NOTIFY_SOCKET`).
enum Readiness {
    @Sendable static func ready(_ address: ListenAddress) async {
        let notifier = SystemdNotifier()
        notifier.ready()
        notifier.status("listening on \(address)")
    }

    static func stopping() {
        SystemdNotifier().stopping()
    }
}
