import Logging
import TetherServer
import TetherSystemd

/// The one place logging is set up: journald natively under systemd, one line per record on
/// stderr otherwise (docs/contract.md: Logging), through TetherSystemd like tetherd.
enum LoggingSetup {
    static func bootstrap(level: ServerLogLevel) -> Logger {
        let tetherLevel = TetherLogLevel(rawValue: level.rawValue) ?? .info
        _ = TetherLogging.bootstrap(identifier: "tether-server", level: tetherLevel)
        return Logger(label: "tether-server")
    }
}
