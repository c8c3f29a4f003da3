import Glibc

/// A file's identity as `fstat(2)` gives it: device and inode numbers.
package struct FileIdentity: Sendable, Hashable, CustomStringConvertible {
    package var device: UInt64
    package var inode: UInt64

    package init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// Parses `JOURNAL_STREAM`'s `DEVICE:INODE` (both decimal).
    package init?(journalStream: String) {
        let parts = journalStream.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return nil }
        self.init(device: device, inode: inode)
    }

    /// The identity of an open file descriptor, or `nil` when it is closed.
    package init?(fileDescriptor: Int32) {
        var info = stat()
        guard fstat(fileDescriptor, &info) == 0 else { return nil }
        self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    package var description: String { "\(device):\(inode)" }
}

/// What the log destination decision looks at, injectable so that the decision can be tested.
package struct LogEnvironment: Sendable {
    /// journald's native socket (`sd_journal_sendv` sends there).
    package static let journalSocketPath = "/run/systemd/journal/socket"
    /// Exists when systemd is the init system.
    package static let systemdRunPath = "/run/systemd/system"

    /// Environment variables (`JOURNAL_STREAM`, `INVOCATION_ID`).
    package var variables: [String: String]
    /// The identity of the file stderr is open on.
    package var stderrIdentity: FileIdentity?
    /// The parent's process id.
    package var parentProcessID: Int32
    /// Whether a path exists.
    package var pathExists: @Sendable (String) -> Bool

    package init(
        variables: [String: String], stderrIdentity: FileIdentity?, parentProcessID: Int32,
        pathExists: @escaping @Sendable (String) -> Bool
    ) {
        self.variables = variables
        self.stderrIdentity = stderrIdentity
        self.parentProcessID = parentProcessID
        self.pathExists = pathExists
    }

    /// This process's environment.
    package static func current() -> LogEnvironment {
        var variables: [String: String] = [:]
        for name in ["JOURNAL_STREAM", "INVOCATION_ID"] {
            if let value = getenv(name) { variables[name] = String(cString: value) }
        }
        return LogEnvironment(
            variables: variables, stderrIdentity: FileIdentity(fileDescriptor: 2), parentProcessID: getppid(),
            pathExists: { access($0, F_OK) == 0 })
    }
}
