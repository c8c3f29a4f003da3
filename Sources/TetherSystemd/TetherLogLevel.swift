import Logging

/// Tether's seven log levels (docs/contract.md: Logging), from the most to the least severe, and how they map
/// onto swift-log levels and syslog/journald priorities.
///
/// swift-log has exactly seven levels too, so the mapping is one to one. Two of them are named
/// differently, and code must use the swift-log name:
///
/// | Tether  | swift-log call      | PRIORITY |
/// |---------|---------------------|----------|
/// | fatal   | `logger.critical`   | 2        |
/// | error   | `logger.error`      | 3        |
/// | warn    | `logger.warning`    | 4        |
/// | info    | **`logger.notice`** | 6        |
/// | detail  | **`logger.info`**   | 6        |
/// | debug   | `logger.debug`      | 7        |
/// | trace   | `logger.trace`      | 7        |
///
/// So an operator-facing "info" line is `logger.notice(...)`, and the chattier "detail" line
/// is `logger.info(...)`.
package enum TetherLogLevel: String, CaseIterable, Sendable, Comparable, CustomStringConvertible {
    case fatal
    case error
    case warn
    case info
    case detail
    case debug
    case trace

    /// The swift-log level that stands for this level.
    package var loggerLevel: Logger.Level {
        switch self {
        case .fatal: .critical
        case .error: .error
        case .warn: .warning
        case .info: .notice
        case .detail: .info
        case .debug: .debug
        case .trace: .trace
        }
    }

    /// The syslog priority journald records in `PRIORITY` (docs/contract.md: Logging: 2 3 4 6 6 7 7).
    package var priority: Int {
        switch self {
        case .fatal: 2
        case .error: 3
        case .warn: 4
        case .info, .detail: 6
        case .debug, .trace: 7
        }
    }

    /// The Tether level a swift-log level stands for.
    package init(loggerLevel: Logger.Level) {
        switch loggerLevel {
        case .critical: self = .fatal
        case .error: self = .error
        case .warning: self = .warn
        case .notice: self = .info
        case .info: self = .detail
        case .debug: self = .debug
        case .trace: self = .trace
        }
    }

    /// Parses a level name as written in `tetherd.toml` (`log_level`) or given to
    /// `tetherctl log-level`. Surrounding white space and letter case are ignored.
    package init(parsing text: String) throws(TetherLogLevelError) {
        let name = text.trimmingWhitespace().lowercased()
        guard let level = Self(rawValue: name) else { throw TetherLogLevelError(text: text) }
        self = level
    }

    /// The valid names, most severe first, as an operator would type them.
    package static var validNames: String { allCases.map(\.rawValue).joined(separator: " ") }

    package var description: String { rawValue }

    /// More severe levels compare smaller: `.fatal < .trace`.
    package static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.severityIndex < rhs.severityIndex
    }

    private var severityIndex: Int { Self.allCases.firstIndex(of: self)! }
}

/// A log level name that is not one of Tether's seven levels.
package struct TetherLogLevelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text that was given.
    package var text: String

    package init(text: String) { self.text = text }

    package var description: String {
        "unknown log level '\(text)' (hint: use one of \(TetherLogLevel.validNames))"
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and line breaks.
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0.isNewline }
        guard let start = firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = lastIndex(where: { !isSpace($0) })!
        return String(self[start...end])
    }
}
