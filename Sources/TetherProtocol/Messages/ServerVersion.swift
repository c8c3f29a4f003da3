/// A point in a partition's history: a server version and the random salt the server
/// gave it (docs/sync-model.md). Version 0 with salt 0 is the empty beginning of every
/// history. Ordered by version.
package struct ServerVersion: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    package var version: Int64
    package var salt: Int64

    package init(version: Int64, salt: Int64) {
        self.version = version
        self.salt = salt
    }

    /// Before the first download.
    package static let none = ServerVersion(version: 0, salt: 0)
    /// The same as ``none``.
    package static let zero = none

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.version < rhs.version }

    package var description: String { "v\(version)" }
}
