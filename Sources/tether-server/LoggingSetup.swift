import Logging
import TetherServer

/// The one place logging is set up: a plain stderr handler for now. The journald handler
/// of module TetherSystemd replaces `makeHandler` when it lands (SPEC §9).
enum LoggingSetup {
    static func bootstrap(level: ServerLogLevel) -> Logger {
        let swiftLevel = Self.level(level)
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = swiftLevel
            return handler
        }
        var logger = Logger(label: "tether-server")
        logger.logLevel = swiftLevel
        return logger
    }

    /// SPEC §9's levels on swift-log's: `info` shows notices (start, stop, admin changes),
    /// `detail` also routine events.
    static func level(_ level: ServerLogLevel) -> Logger.Level {
        switch level {
        case .fatal: .critical
        case .error: .error
        case .warn: .warning
        case .info: .notice
        case .detail: .info
        case .debug: .debug
        case .trace: .trace
        }
    }
}
