/// Errors of the state database. None is transient in the sense of "retry the same call":
/// each needs an operator to look at disk space, permissions or the file.
package enum AgentStateError: Error, Sendable, Hashable, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case writeFailed(path: String, reason: String)
    case corrupt(path: String, reason: String)
    /// The state database (or its `-wal`, `-shm`, `-journal`) is a symbolic link: refused, never followed.
    case symbolicLink(path: String)

    package var description: String {
        switch self {
        case .cannotOpen(let path, let reason): "cannot open state database \(path): \(reason)"
        case .writeFailed(let path, let reason): "cannot write state database \(path): \(reason)"
        case .corrupt(let path, let reason): "state database \(path) cannot be read: \(reason)"
        case .symbolicLink(let path): "state database \(path) is a symbolic link; refused, not followed"
        }
    }

    package var hint: String {
        switch self {
        case .cannotOpen: "check that state_dir exists and is writable by the tether user"
        case .writeFailed: "check free disk space and permissions of state_dir; the agent retries resets after a restart"
        case .symbolicLink: "tetherd never follows a symbolic link in state_dir; find out who made it, remove it and start tetherd again (docs/operations.md \"Symbolic links\")"
        case .corrupt: "stop tetherd, keep a copy of state.sqlite for analysis, and check it with `sqlite3 state.sqlite 'PRAGMA integrity_check'`"
        }
    }
}
