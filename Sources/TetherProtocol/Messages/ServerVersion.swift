/// A point in a partition's history: a server version and the random salt the server
/// gave it (docs/sync-model.md). Version 0 with salt 0 is the empty beginning of every
/// history. Ordered by version.
public struct ServerVersion: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public var version: Int64
    public var salt: Int64

    public init(version: Int64, salt: Int64) {
        self.version = version
        self.salt = salt
    }

    /// Before the first download.
    public static let none = ServerVersion(version: 0, salt: 0)
    /// The same as ``none``.
    public static let zero = none

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.version < rhs.version }

    public var description: String { "v\(version)" }
}
