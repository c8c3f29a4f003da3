import TetherProtocol

/// A partition's row as both server storages read it.
struct StoredPartition: Sendable, Hashable {
    var id: Int64
    var head: PartitionHead
    /// Incremented by every restore and terminate-sync where instances share the storage
    /// (PostgreSQL, ``ServerStorage/epoch(of:)``); always 0 in SQLite, which has no epoch.
    var epoch: Int64 = 0
}

/// What a partition's row, its versions and its salts hold: one rule for both server storages
/// (as ``UploadSequencing`` is for uploads), so each storage keeps only its SQL dialect.
enum PartitionRules {
    /// The head a partition is created with, on its first bind or snapshot: version 0 with
    /// salt 0, as both its latest version and its base (it has no history yet).
    static let createdHead = PartitionHead.empty

    /// A salt for a new version or client file: random, and never 0, the salt of version 0 and
    /// of a partition not created yet, so a store can only match a version it really saw. The
    /// rule of every salt in the protocol (``StoreLineage/freshSalt()``).
    static func freshSalt() -> Int64 { StoreLineage.freshSalt() }

    /// The version the next integrated changeset commits as.
    static func version(after latest: ServerVersion) -> ServerVersion {
        ServerVersion(version: latest.version + 1, salt: freshSalt())
    }

    /// Where the salt of a version is found.
    enum SaltSource: Sendable, Hashable {
        /// Known without reading the history (nil: the version does not exist).
        case known(Int64?)
        /// In the partition's history row of that version, if it is retained.
        case history(partitionID: Int64)
    }

    /// The salt of `version` in the retained history of `partition` (nil: not created yet):
    /// version 0 always has salt 0, the base has the head's base salt, any other version the
    /// salt of its history entry.
    static func salt(of version: Int64, in partition: StoredPartition?) -> SaltSource {
        if version == 0 { return .known(0) }
        guard let partition else { return .known(nil) }
        if version == partition.head.base.version { return .known(partition.head.base.salt) }
        return .history(partitionID: partition.id)
    }

    /// Where the highest seq of a client file integrated at or before a version is found.
    enum IntegratedSeqSource: Sendable, Hashable {
        case known(Int64)
        /// The highest `origin_seq` of the client file's history entries at or before the version (0 when none).
        case history
    }

    /// A client file last integrated at `integratedVersion` (its `integratedSeq` then) answers
    /// for any version at or after that from its own row; for an earlier version, the history says.
    static func integratedSeq(_ integratedSeq: Int64, integratedVersion: Int64, atOrBefore version: Int64) -> IntegratedSeqSource {
        integratedVersion <= version ? .known(integratedSeq) : .history
    }

    /// A snapshot's id: 16 hex digits, unguessable enough not to be confused with another server's.
    static func snapshotID() -> String {
        let hex = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
