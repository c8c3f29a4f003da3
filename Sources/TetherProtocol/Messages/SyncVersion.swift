/// A point in a partition's history: a server version and the random salt the server
/// gave it. Version 0 with salt 0 is the empty beginning of every history.
public struct SyncVersion: Sendable, Hashable, Codable, CustomStringConvertible {
    public var version: Int64
    public var salt: Int64

    public init(version: Int64, salt: Int64) {
        self.version = version
        self.salt = salt
    }

    public static let zero = SyncVersion(version: 0, salt: 0)

    public var description: String { "v\(version)" }
}
