/// Where log records go: journald natively, or one plain line per record on stderr.
package enum LogDestination: String, CaseIterable, Sendable, CustomStringConvertible {
    /// journald when the process runs under systemd (see ``LogDestinationDecision``), else stderr.
    case auto
    /// journald, whatever the environment says.
    case journal
    /// stderr, whatever the environment says.
    case stderr

    package var description: String { rawValue }

    /// Parses `auto`, `journal` or `stderr` (letter case ignored).
    package init(parsing text: String) throws(LogDestinationError) {
        guard let destination = Self(rawValue: text.trimmingWhitespace().lowercased()) else {
            throw LogDestinationError(text: text)
        }
        self = destination
    }
}

/// A log destination name that is not `auto`, `journal` or `stderr`.
package struct LogDestinationError: Error, Sendable, Equatable, CustomStringConvertible {
    package var text: String

    package init(text: String) { self.text = text }

    package var description: String {
        "unknown log destination '\(text)' (hint: use one of "
            + LogDestination.allCases.map(\.rawValue).joined(separator: " ") + ")"
    }
}

/// The destination chosen for a process, and why (shown by `tetherd` at start-up at detail level).
package struct LogDestinationDecision: Sendable, Equatable, CustomStringConvertible {
    /// `.journal` or `.stderr`, never `.auto`.
    package var destination: LogDestination
    package var reason: String

    package var description: String { "\(destination) (\(reason))" }

    /// Decides where records go.
    ///
    /// `.journal` and `.stderr` are taken as they are. `.auto` picks journald when
    /// - `JOURNAL_STREAM` (`DEVICE:INODE`, set by systemd when it connects stdout/stderr to the
    ///   journal) names the file stderr is open on, or
    /// - the journal socket exists and the process runs under systemd: `INVOCATION_ID` is set,
    ///   or the parent is PID 1 and `/run/systemd/system` exists;
    ///
    /// and stderr otherwise (a terminal, a pipe, a test harness, a container without journald).
    package static func decide(_ requested: LogDestination, environment: LogEnvironment) -> LogDestinationDecision {
        switch requested {
        case .journal: return .init(destination: .journal, reason: "requested")
        case .stderr: return .init(destination: .stderr, reason: "requested")
        case .auto: break
        }
        if let stream = environment.variables["JOURNAL_STREAM"] {
            if let expected = FileIdentity(journalStream: stream), expected == environment.stderrIdentity {
                return .init(destination: .journal, reason: "JOURNAL_STREAM matches stderr")
            }
        }
        let socket = environment.pathExists(LogEnvironment.journalSocketPath)
        if socket {
            if environment.variables["INVOCATION_ID"].map({ !$0.isEmpty }) ?? false {
                return .init(destination: .journal, reason: "journal socket present and INVOCATION_ID set")
            }
            if environment.parentProcessID == 1 && environment.pathExists(LogEnvironment.systemdRunPath) {
                return .init(destination: .journal, reason: "journal socket present and started by systemd")
            }
        }
        let why =
            if environment.variables["JOURNAL_STREAM"] != nil {
                "JOURNAL_STREAM does not match stderr"
            } else if socket {
                "not running under systemd"
            } else {
                "no journal socket"
            }
        return .init(destination: .stderr, reason: why)
    }
}
