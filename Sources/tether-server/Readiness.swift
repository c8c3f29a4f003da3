import TetherServer

/// The one place the server tells its supervisor it is ready. systemd `Type=notify`
/// (`READY=1`, `STATUS=`) is wired here once module TetherSystemd lands; until then the
/// "listening on" log line is the readiness signal.
enum Readiness {
    @Sendable static func ready(_ address: ListenAddress) async {}
}
