import Logging
import Synchronization

/// Sets up logging for a Tether program: journald or stderr, with the shared run-time level.
///
///     let decision = TetherLogging.bootstrap(identifier: "tetherd", level: .info, destination: .auto)
///     let logger = Logger(label: "tether.agent")
///     logger.notice("started")              // Tether "info"
///     logger.info("session details")        // Tether "detail"
///     TetherLogging.level = .debug          // tetherctl log-level, SIGHUP
package enum TetherLogging {
    /// The level every handler made by ``bootstrap(identifier:level:destination:environment:)``
    /// consults on each record.
    package static let levelBox = LogLevelBox(.info)

    private static let decision = Mutex<LogDestinationDecision?>(nil)

    /// The current process-wide level; setting it applies at once to every logger.
    package static var level: TetherLogLevel {
        get { levelBox.level }
        set { levelBox.level = newValue }
    }

    /// The destination chosen by the bootstrap, `nil` before it.
    package static var destination: LogDestinationDecision? { decision.withLock { $0 } }

    /// Bootstraps swift-log (`LoggingSystem.bootstrap`) with Tether's handlers. Safe to call more
    /// than once: later calls only set the level and return the first decision, because swift-log
    /// can be bootstrapped only once per process.
    ///
    /// - Parameters:
    ///   - identifier: `SYSLOG_IDENTIFIER`, the program name (`tetherd`, `tether-server`).
    ///   - level: the initial level (`log_level` of the configuration).
    ///   - destination: `.auto` (journald under systemd, else stderr), `.journal` or `.stderr`.
    ///   - environment: what `.auto` looks at; this process's by default.
    /// - Returns: where records go and why.
    @discardableResult
    package static func bootstrap(
        identifier: String, level: TetherLogLevel = .info, destination: LogDestination = .auto,
        environment: @autoclosure () -> LogEnvironment = .current()
    ) -> LogDestinationDecision {
        levelBox.level = level
        return decision.withLock { chosen in
            if let chosen { return chosen }
            let made = LogDestinationDecision.decide(destination, environment: environment())
            let box = levelBox
            LoggingSystem.bootstrap { label in
                makeHandler(label: label, identifier: identifier, destination: made.destination, levelBox: box)
            }
            chosen = made
            return made
        }
    }

    /// A handler for one logger without touching the global bootstrap (tests, tools).
    ///
    /// - Parameter destination: `.journal` gives a ``JournalLogHandler``, anything else a
    ///   ``StderrLogHandler``; resolve `.auto` with ``LogDestinationDecision/decide(_:environment:)`` first.
    package static func makeHandler(
        label: String, identifier: String, destination: LogDestination, levelBox: LogLevelBox
    ) -> any LogHandler {
        switch destination {
        case .journal: JournalLogHandler(label: label, identifier: identifier, levelBox: levelBox)
        case .stderr, .auto: StderrLogHandler(levelBox: levelBox)
        }
    }
}
