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

/// The identity the server gave one store: a client file id and its salt (docs/sync-model.md).
public struct ClientFileIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    public var id: Int64
    public var salt: Int64

    public init(id: Int64, salt: Int64) {
        self.id = id
        self.salt = salt
    }

    /// The salt is a secret-ish check value and is not printed.
    public var description: String { "client file \(id)" }
}

/// What a user may do with a partition (`[[grant]] access`).
public enum PartitionAccess: String, Sendable, Hashable, Codable, CaseIterable {
    case read
    case readwrite

    public var canWrite: Bool { self == .readwrite }
}
