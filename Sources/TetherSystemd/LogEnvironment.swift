import Glibc

/// A file's identity as `fstat(2)` gives it: device and inode numbers.
public struct FileIdentity: Sendable, Hashable, CustomStringConvertible {
    public var device: UInt64
    public var inode: UInt64

    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// Parses `JOURNAL_STREAM`'s `DEVICE:INODE` (both decimal).
    public init?(journalStream: String) {
        let parts = journalStream.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return nil }
        self.init(device: device, inode: inode)
    }

    /// The identity of an open file descriptor, or `nil` when it is closed.
    public init?(fileDescriptor: Int32) {
        var info = stat()
        guard fstat(fileDescriptor, &info) == 0 else { return nil }
        self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    public var description: String { "\(device):\(inode)" }
}

/// What the log destination decision looks at, injectable so that the decision can be tested.
public struct LogEnvironment: Sendable {
    /// journald's native socket (`sd_journal_sendv` sends there).
    public static let journalSocketPath = "/run/systemd/journal/socket"
    /// Exists when systemd is the init system.
    public static let systemdRunPath = "/run/systemd/system"

    /// Environment variables (`JOURNAL_STREAM`, `INVOCATION_ID`).
    public var variables: [String: String]
    /// The identity of the file stderr is open on.
    public var stderrIdentity: FileIdentity?
    /// The parent's process id.
    public var parentProcessID: Int32
    /// Whether a path exists.
    public var pathExists: @Sendable (String) -> Bool

    public init(
        variables: [String: String], stderrIdentity: FileIdentity?, parentProcessID: Int32,
        pathExists: @escaping @Sendable (String) -> Bool
    ) {
        self.variables = variables
        self.stderrIdentity = stderrIdentity
        self.parentProcessID = parentProcessID
        self.pathExists = pathExists
    }

    /// This process's environment.
    public static func current() -> LogEnvironment {
        var variables: [String: String] = [:]
        for name in ["JOURNAL_STREAM", "INVOCATION_ID"] {
            if let value = getenv(name) { variables[name] = String(cString: value) }
        }
        return LogEnvironment(
            variables: variables, stderrIdentity: FileIdentity(fileDescriptor: 2), parentProcessID: getppid(),
            pathExists: { access($0, F_OK) == 0 })
    }
}
