import TetherServer
import TetherSystemd

/// Tells systemd (`Type=notify`) that the server is ready once both its listeners are bound, with a
/// one-line `STATUS=`; `RELOADING=1` and `READY=1` around a SIGHUP reload (systemd 252 has no
/// `Type=notify-reload`); `stopping()` goes out when the service group begins to shut down.
/// Quietly does nothing when not run by systemd (no `NOTIFY_SOCKET`).
enum Readiness {
    @Sendable static func ready(_ listeners: ServerApp.BoundListeners) async {
        let notifier = SystemdNotifier()
        notifier.ready()
        notifier.status("listening on \(listeners.listen), admin on \(listeners.admin)")
    }

    @Sendable static func reloading(_ started: Bool) {
        let notifier = SystemdNotifier()
        if started { notifier.reloading() } else { notifier.ready() }
    }

    static func stopping() {
        SystemdNotifier().stopping()
    }
}
