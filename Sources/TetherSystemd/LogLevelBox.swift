import Logging
import Synchronization

/// The process's current log level, shared by every Tether log handler and changeable at run
/// time (`tetherctl log-level`, `log_level` on SIGHUP). Handlers read it on every record, so a
/// change applies at once to every logger, including loggers created before the change.
package final class LogLevelBox: Sendable {
    private let storage: Atomic<UInt8>

    package init(_ level: TetherLogLevel = .info) {
        storage = Atomic(Self.encode(level))
    }

    /// The current level. Records less severe than this are dropped.
    package var level: TetherLogLevel {
        get { TetherLogLevel.allCases[Int(storage.load(ordering: .relaxed))] }
        set { storage.store(Self.encode(newValue), ordering: .relaxed) }
    }

    /// The current level as a swift-log level.
    package var loggerLevel: Logger.Level { level.loggerLevel }

    /// Sets the level and returns the previous one.
    @discardableResult
    package func set(_ level: TetherLogLevel) -> TetherLogLevel {
        let old = storage.exchange(Self.encode(level), ordering: .relaxed)
        return TetherLogLevel.allCases[Int(old)]
    }

    private static func encode(_ level: TetherLogLevel) -> UInt8 {
        UInt8(TetherLogLevel.allCases.firstIndex(of: level)!)
    }
}
