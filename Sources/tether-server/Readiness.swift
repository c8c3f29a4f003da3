import TetherServer

/// The one place the server tells its supervisor it is ready, called once the listener is
/// bound. When module TetherSystemd lands, this sends `READY=1` and `STATUS=listening on …`
/// (the packaged unit is `Type=notify` with `WatchdogSec=`, so `WATCHDOG=1` pings start
/// here too, and `STOPPING=1` goes where `ServerApp.run` returns). Until then the
/// "listening on" log line is the readiness signal.
enum Readiness {
    @Sendable static func ready(_ address: ListenAddress) async {}
}
