import Foundation
import TetherProtocol

/// Where a partition's history stands.
package struct PartitionHead: Sendable, Hashable {
    /// The newest version (``ServerVersion/zero`` for an empty partition).
    package var latest: ServerVersion
    /// The oldest version a device may resume from: history up to it was compacted away.
    package var base: ServerVersion

    package init(latest: ServerVersion, base: ServerVersion) {
        self.latest = latest
        self.base = base
    }

    package static let empty = PartitionHead(latest: .none, base: .none)
}

/// What the server knows about one store (client file) of a partition.
package struct ClientFileRecord: Sendable, Hashable {
    package var identity: ClientFileIdentity
    /// Highest local seq of the store's changes integrated so far (uploads at or below are ignored).
    package var integratedSeq: Int64
    /// The server version of the last integrated upload.
    package var integratedVersion: Int64
    /// The upload salt of the session whose upload was integrated last (``StoreLineage``);
    /// 0 when unknown (integrated from an agent older than protocol 3, or nothing yet).
    package var integratedSalt: Int64
    /// The highest server version the store reported having at a bind.
    package var confirmedVersion: Int64
    package var lastSeen: Date

    package init(
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
package struct HistoryEntry: Sendable, Hashable {
    package var version: ServerVersion
    /// The client file that uploaded it, and the last local seq it covered.
    package var originFile: Int64
    package var originSeq: Int64
    /// The changeset as stored (``Changeset/encoded``), checked when read
    /// (``Changeset/check(_:)``) and sent to devices as it is.
    package var encodedChangeset: [UInt8]
    /// The rows before and after each change (``RowImages/encoded``), for filtered sessions;
    /// nil for an entry written before the server kept them.
    package var images: [UInt8]?
    /// The upload's compensating writes (``CompensationRecord/encoded``), when it had some.
    package var compensations: [UInt8]?

    package init(
        version: ServerVersion, originFile: Int64, originSeq: Int64, encodedChangeset: [UInt8], images: [UInt8]? = nil,
        compensations: [UInt8]? = nil
    ) {
        self.images = images
        self.compensations = compensations
        self.version = version
        self.originFile = originFile
        self.originSeq = originSeq
        self.encodedChangeset = encodedChangeset
    }

    /// The changeset decoded (tests and tools; downloads pass ``encodedChangeset`` on).
    /// Throws ``StorageError/corrupt(_:)`` rather than reading as an empty changeset.
    package func decodedChangeset() throws(StorageError) -> Changeset {
        do { return try Changeset.decode(encodedChangeset) } catch { throw .corrupt("history") }
    }
}

/// The result of committing an upload.
package struct IntegrationOutcome: Sendable, Hashable {
    package var head: PartitionHead
    /// Changesets appended to the history.
    package var accepted: Int
    /// Changesets at or below the store's integrated seq, ignored (re-sent after a crash).
    package var ignored: Int
    package var integratedSeq: Int64
    /// Changes not integrated because the uploading session may not make them (compensating
    /// writes, sent back with the acknowledgement).
    package var compensatingWrites: Int = 0
    /// The first changeset that neither follows the integrated seq nor repeats it (an earlier
    /// batch was lost): it and the rest of the upload were refused.
    package var gap: UploadGap?
}

/// An upload batch whose `afterSeq` is not the seq the server integrated last.
package struct UploadGap: Sendable, Hashable {
    package var afterSeq: Int64
    package var integratedSeq: Int64
}

/// One schema the server has used; breaking ones reset every store made with an older one.
package struct SchemaRecord: Sendable, Hashable {
    package var schema: Schema
    package var isBreaking: Bool
    package var appliedAt: Date

    package init(schema: Schema, isBreaking: Bool, appliedAt: Date) {
        self.schema = schema
        self.isBreaking = isBreaking
        self.appliedAt = appliedAt
    }

    package var version: Int { schema.version }
}

/// Server-wide flags kept in the database (they survive restarts).
package struct ServerFlags: Sendable, Hashable {
    /// `terminate-sync` is in effect: binds get 201 until `enable-sync`.
    package var syncTerminated: Bool
    /// Set by `admin recovery on|off`; nil when the config file's `client_recovery` applies.
    package var recoveryOverride: Bool?
    /// The config file's `client_recovery` when the override was set: a changed config value wins again.
    package var recoveryOverrideConfigValue: Bool?

    package init(syncTerminated: Bool = false, recoveryOverride: Bool? = nil, recoveryOverrideConfigValue: Bool? = nil) {
        self.syncTerminated = syncTerminated
        self.recoveryOverride = recoveryOverride
        self.recoveryOverrideConfigValue = recoveryOverrideConfigValue
    }
}

/// A snapshot of one partition (`admin snapshot`).
package struct SnapshotRecord: Sendable, Hashable, Codable {
    package var id: String
    package var partition: String
    package var version: Int64
    package var createdAt: Date
}

/// A partition as `admin status` shows it.
package struct PartitionStatistics: Sendable, Hashable {
    package var name: String
    package var head: PartitionHead
    package var historyEntries: Int
    package var historyBytes: Int64
    package var rows: Int
    package var clientFiles: Int
}

/// What compaction removed.
package struct CompactionReport: Sendable, Hashable {
    package var partitions: [String: Int]
    package var removedEntries: Int { partitions.values.reduce(0, +) }
}

/// A partition whose head and history broke ``HistoryInvariant`` when the server started, and
/// what it was repaired to.
package struct HistoryRepair: Sendable, Hashable {
    package var partition: String
    package var problems: [String]
    package var head: PartitionHead

    package init(partition: String, problems: [String], head: PartitionHead) {
        self.partition = partition
        self.problems = problems
        self.head = head
    }
}
