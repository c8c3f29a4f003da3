import Foundation
public import TetherProtocol

/// Where a partition's history stands.
public struct PartitionHead: Sendable, Hashable {
    /// The newest version (``ServerVersion/zero`` for an empty partition).
    public var latest: ServerVersion
    /// The oldest version a device may resume from: history up to it was compacted away.
    public var base: ServerVersion

    public init(latest: ServerVersion, base: ServerVersion) {
        self.latest = latest
        self.base = base
    }

    public static let empty = PartitionHead(latest: .none, base: .none)
}

/// What the server knows about one store (client file) of a partition.
public struct ClientFileRecord: Sendable, Hashable {
    public var identity: ClientFileIdentity
    /// Highest local seq of the store's changes integrated so far (uploads at or below are ignored).
    public var integratedSeq: Int64
    /// The server version of the last integrated upload.
    public var integratedVersion: Int64
    /// The upload salt of the session whose upload was integrated last (``StoreLineage``);
    /// 0 when unknown (integrated from an agent older than protocol 3, or nothing yet).
    public var integratedSalt: Int64
    /// The highest server version the store reported having at a bind.
    public var confirmedVersion: Int64
    public var lastSeen: Date

    public init(
        identity: ClientFileIdentity, integratedSeq: Int64, integratedVersion: Int64, integratedSalt: Int64 = 0,
        confirmedVersion: Int64 = 0, lastSeen: Date
    ) {
        self.identity = identity
        self.integratedSeq = integratedSeq
        self.integratedVersion = integratedVersion
        self.integratedSalt = integratedSalt
        self.confirmedVersion = confirmedVersion
        self.lastSeen = lastSeen
    }

    /// The columns of `client_files` a snapshot copies and a restore puts back, after `id`, in
    /// both storages (one list, so a new column cannot be copied by one and forgotten by the other).
    static let copiedColumns = "salt, integrated_seq, integrated_version, integrated_salt, confirmed_version, created_at, last_seen"
}

/// One accepted changeset in a partition's history.
public struct HistoryEntry: Sendable, Hashable {
    public var version: ServerVersion
    /// The client file that uploaded it, and the last local seq it covered.
    public var originFile: Int64
    public var originSeq: Int64
    /// The changeset as stored (``Changeset/encoded``), checked when read
    /// (``Changeset/check(_:)``) and sent to devices as it is.
    public var encodedChangeset: [UInt8]

    public init(version: ServerVersion, originFile: Int64, originSeq: Int64, encodedChangeset: [UInt8]) {
        self.version = version
        self.originFile = originFile
        self.originSeq = originSeq
        self.encodedChangeset = encodedChangeset
    }

    /// The changeset decoded (tests and tools; downloads pass ``encodedChangeset`` on).
    /// Throws ``StorageError/corrupt(_:)`` rather than reading as an empty changeset.
    public func decodedChangeset() throws(StorageError) -> Changeset {
        do { return try Changeset.decode(encodedChangeset) } catch { throw .corrupt("history") }
    }
}

/// The result of committing an upload.
public struct IntegrationOutcome: Sendable, Hashable {
    public var head: PartitionHead
    /// Changesets appended to the history.
    public var accepted: Int
    /// Changesets at or below the store's integrated seq, ignored (re-sent after a crash).
    public var ignored: Int
    public var integratedSeq: Int64
    /// The first changeset that neither follows the integrated seq nor repeats it (an earlier
    /// batch was lost): it and the rest of the upload were refused.
    public var gap: UploadGap?
}

/// An upload batch whose `afterSeq` is not the seq the server integrated last.
public struct UploadGap: Sendable, Hashable {
    public var afterSeq: Int64
    public var integratedSeq: Int64
}

/// One schema the server has used; breaking ones reset every store made with an older one.
public struct SchemaRecord: Sendable, Hashable {
    public var schema: Schema
    public var isBreaking: Bool
    public var appliedAt: Date

    public init(schema: Schema, isBreaking: Bool, appliedAt: Date) {
        self.schema = schema
        self.isBreaking = isBreaking
        self.appliedAt = appliedAt
    }

    public var version: Int { schema.version }
}

/// Server-wide flags kept in the database (they survive restarts).
public struct ServerFlags: Sendable, Hashable {
    /// `terminate-sync` is in effect: binds get 201 until `enable-sync`.
    public var syncTerminated: Bool
    /// Set by `admin recovery on|off`; nil when the config file's `client_recovery` applies.
    public var recoveryOverride: Bool?
    /// The config file's `client_recovery` when the override was set: a changed config value wins again.
    public var recoveryOverrideConfigValue: Bool?

    public init(syncTerminated: Bool = false, recoveryOverride: Bool? = nil, recoveryOverrideConfigValue: Bool? = nil) {
        self.syncTerminated = syncTerminated
        self.recoveryOverride = recoveryOverride
        self.recoveryOverrideConfigValue = recoveryOverrideConfigValue
    }
}

/// A snapshot of one partition (`admin snapshot`).
public struct SnapshotRecord: Sendable, Hashable, Codable {
    public var id: String
    public var partition: String
    public var version: Int64
    public var createdAt: Date
}

/// A partition as `admin status` shows it.
public struct PartitionStatistics: Sendable, Hashable {
    public var name: String
    public var head: PartitionHead
    public var historyEntries: Int
    public var historyBytes: Int64
    public var rows: Int
    public var clientFiles: Int
}

/// What compaction removed.
public struct CompactionReport: Sendable, Hashable {
    public var partitions: [String: Int]
    public var removedEntries: Int { partitions.values.reduce(0, +) }
}

/// A partition whose head and history broke ``HistoryInvariant`` when the server started, and
/// what it was repaired to.
public struct HistoryRepair: Sendable, Hashable {
    public var partition: String
    public var problems: [String]
    public var head: PartitionHead

    public init(partition: String, problems: [String], head: PartitionHead) {
        self.partition = partition
        self.problems = problems
        self.head = head
    }
}
