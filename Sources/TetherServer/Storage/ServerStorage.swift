import Foundation
public import TetherProtocol

/// Everything the sync server keeps durably, behind one narrow interface, implemented by
/// ``SQLiteServerStorage`` and ``PostgresServerStorage``. The rules they share are written once
/// (``UploadSequencing``, ``HistoryInvariant``, ``PartitionRules``, ``ServerFlags/metaRows``),
/// so each keeps only its SQL. Every method that returns has committed (and fsynced) its changes.
public protocol ServerStorage: DeviceLedgerStorage {
    // Server-wide state.
    func flags() async throws -> ServerFlags
    func setFlags(_ flags: ServerFlags) async throws
    /// Marks sync terminated and forgets every client file of every partition, atomically.
    func terminateSync() async throws -> Int
    func schemaHistory() async throws -> [SchemaRecord]
    /// Appends a schema; when `migration` is given, every partition's state is rewritten to
    /// fit the new schema in the same transaction.
    func appendSchema(_ record: SchemaRecord, migration: StateMigration?) async throws
    func runtimeGrants() async throws -> [RuntimeGrant]
    func setRuntimeGrant(_ grant: RuntimeGrant) async throws

    // Partitions and client files.
    /// nil when the partition has never been bound.
    func head(of partition: PartitionName) async throws -> PartitionHead?
    /// The salt of `version` when it is in the retained history (or is the base or zero).
    func salt(of partition: PartitionName, version: Int64) async throws -> Int64?
    func clientFile(_ id: Int64, of partition: PartitionName) async throws -> ClientFileRecord?
    /// Creates the partition when needed and a new client file with a fresh id and salt.
    func registerClientFile(in partition: PartitionName, now: Date) async throws -> (ClientFileIdentity, PartitionHead)
    /// Records that the store bound at `version`: last seen now, and its confirmed version
    /// raised to `version` (never lowered).
    func touchClientFile(_ id: Int64, of partition: PartitionName, now: Date, confirmedVersion: Int64) async throws

    // Sync.
    /// In one transaction, per changeset in order: skips it when its `lastSeq` is at or below
    /// the client file's integrated seq (a re-send); applies it to the state in server order
    /// and appends it to the history with a fresh salt when its `afterSeq` is that seq;
    /// otherwise stops and reports the gap. Records the new integrated seq, and `uploadSalt`
    /// (the session's, ``StoreLineage``) as the salt it was integrated under, in the same
    /// transaction.
    func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, uploadSalt: Int64, into partition: PartitionName, now: Date
    ) async throws -> IntegrationOutcome
    /// History entries after `version`, oldest first, at most `maxEntries`, stopping once
    /// `maxBytes` of changesets were collected (always at least one entry when there is one).
    func history(of partition: PartitionName, after version: Int64, maxEntries: Int, maxBytes: Int) async throws -> [HistoryEntry]
    /// The highest seq of `clientFile` integrated at or before `version` (0 when unknown).
    func integratedSeq(of clientFile: Int64, in partition: PartitionName, atOrBefore version: Int64) async throws -> Int64
    /// A consistent reader of the partition's whole state at its latest version.
    func openState(of partition: PartitionName) async throws -> any StateReader
    /// State downloads reading now and waiting for a slot, where the storage bounds them
    /// (PostgreSQL, ``DownloadSlots``); nil where it does not.
    var stateDownloads: (reading: Int, waiting: Int)? { get }

    // Administration.
    func snapshot(of partition: PartitionName, now: Date) async throws -> SnapshotRecord
    /// The partition's snapshots, newest first (the console lists them beside the restore form).
    func snapshots(of partition: PartitionName) async throws -> [SnapshotRecord]
    /// Drops history entries created before `cutoff`, keeping the newest dropped one as base.
    func compact(olderThan cutoff: Date) async throws -> CompactionReport
    func partitions() async throws -> [PartitionStatistics]
    /// Every partition's latest version: one row each, nothing counted (``PartitionSummary``).
    func latestVersions() async throws -> [String: Int64]
    /// Client-file housekeeping: marks the client files of `bound` (sessions open now) seen at
    /// `now`, then removes client files last seen before `cutoff` (devices away longer than
    /// the history horizon, and identities handed out to binds never seen again). Returns how
    /// many it removed.
    func expireClientFiles(lastSeenBefore cutoff: Date, bound: [Int64], now: Date) async throws -> Int
    /// Checks every partition's head against its retained history (``HistoryInvariant``) and
    /// repairs one that breaks it (written by a version that restored forward without the
    /// invariant): its history is dropped and its latest version becomes the base.
    func repairHistories() async throws -> [HistoryRepair]
    /// What breaks ``HistoryInvariant`` in `partition` now; empty when it holds.
    func historyProblems(of partition: PartitionName) async throws -> [String]
    /// A consistent copy of everything, while the server runs (SQLite online backup).
    func backup(to path: String) async throws
    func close() async throws

    // Healing from the fleet (docs/client-reset.md, "Healing a restored server").
    /// Rolls state, history and client files back to the snapshot, and records the window it
    /// drops: a heal (devices give it back) or a rollback. Returns the head and the record (nil
    /// when the restore dropped nothing). Throws ``StorageError/notFound``.
    func restore(_ partition: PartitionName, to snapshot: String, mode: RestoreMode, now: Date) async throws -> (PartitionHead, HealRecord?)
    /// Opens (or replaces) the partition's heal record for `window`; used when a device binds
    /// ahead of the history. Returns the record now stored.
    func openHeal(_ partition: PartitionName, window: LostWindow, mode: RestoreMode, origin: HealRecord.Origin, now: Date) async throws -> HealRecord
    /// Raises an open record's ``HealRecord/lostUntil`` to `version` when a device reports a
    /// higher lost version than known (windows the server did not know).
    func noteLostVersion(_ version: Int64, of partition: PartitionName) async throws
    /// The partition's heal record, open or closed; nil when it has none.
    func heal(of partition: PartitionName) async throws -> HealRecord?
    /// The salt the partition's heal record lists for the lost version `version`
    /// (`heal_window`); nil when it lists none.
    func lostSalt(of partition: PartitionName, version: Int64) async throws -> Int64?
    /// Every partition's heal record.
    func heals() async throws -> [HealRecord]
    /// Applies one chunk of a device's contribution, in one transaction with the history
    /// (a healed change is an ordinary history entry of origin 0), and answers it.
    func contributeHeal(_ chunk: HealChunk, into partition: PartitionName, now: Date, epoch: Int64) async throws -> HealReply
    /// Closes the partition's heal (`admin heal-done`): later devices reset as after a rollback.
    /// Returns the closed record; throws ``StorageError/notFound`` when none is open.
    func closeHeal(_ partition: PartitionName, now: Date) async throws -> HealRecord

    // Fencing, where several server instances share the storage (PostgreSQL). A restore
    // increments the partition's epoch, terminate-sync every partition's; a session records it
    // when it binds, and its uploads and history reads are refused with ``StorageError/fenced``
    // once it changed, even before the instance that ran the command reaches the session's
    // instance with its notification.
    /// The partition's epoch (0 for a partition never bound or restored).
    func epoch(of partition: PartitionName) async throws -> Int64
    /// ``registerClientFile(in:now:)`` and the partition's epoch as that registration found it:
    /// a new device's bind reads both in one transaction where the storage has epochs.
    func registerClientFileWithEpoch(in partition: PartitionName, now: Date) async throws -> (ClientFileIdentity, PartitionHead, epoch: Int64)
    /// ``integrate(_:from:uploadSalt:into:now:)``, refused when the partition's epoch is no longer `epoch`.
    func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, uploadSalt: Int64, into partition: PartitionName, now: Date, epoch: Int64
    ) async throws -> IntegrationOutcome
    /// ``history(of:after:maxEntries:maxBytes:)``, refused when the partition's epoch is no longer `epoch`.
    func history(of partition: PartitionName, after version: Int64, maxEntries: Int, maxBytes: Int, epoch: Int64) async throws -> [HistoryEntry]
}

/// Storage one process owns (SQLite): the admin command that restores also ends the
/// sessions in the same process, so there is nothing to fence.
extension ServerStorage {
    public func epoch(of partition: PartitionName) async throws -> Int64 { 0 }

    /// The epoch read first, then the registration: what a storage without a combined one does.
    public func registerClientFileWithEpoch(in partition: PartitionName, now: Date) async throws -> (
        ClientFileIdentity, PartitionHead, epoch: Int64
    ) {
        let epoch = try await epoch(of: partition)
        let (identity, head) = try await registerClientFile(in: partition, now: now)
        return (identity, head, epoch)
    }

    public var stateDownloads: (reading: Int, waiting: Int)? { nil }

    public func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, uploadSalt: Int64, into partition: PartitionName, now: Date, epoch: Int64
    ) async throws -> IntegrationOutcome {
        try await integrate(uploads, from: clientFile, uploadSalt: uploadSalt, into: partition, now: now)
    }

    public func history(
        of partition: PartitionName, after version: Int64, maxEntries: Int, maxBytes: Int, epoch: Int64
    ) async throws -> [HistoryEntry] {
        try await history(of: partition, after: version, maxEntries: maxEntries, maxBytes: maxBytes)
    }
}

/// Uploads without a session salt (tests and tools; an agent older than protocol 3).
extension ServerStorage {
    public func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, into partition: PartitionName, now: Date
    ) async throws -> IntegrationOutcome {
        try await integrate(uploads, from: clientFile, uploadSalt: 0, into: partition, now: now)
    }

    public func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, into partition: PartitionName, now: Date, epoch: Int64
    ) async throws -> IntegrationOutcome {
        try await integrate(uploads, from: clientFile, uploadSalt: 0, into: partition, now: now, epoch: epoch)
    }

    public func touchClientFile(_ id: Int64, of partition: PartitionName, now: Date) async throws {
        try await touchClientFile(id, of: partition, now: now, confirmedVersion: 0)
    }
}

extension ServerStorage {
    /// ``restore(_:to:mode:now:)`` as a rollback: the window it drops stays lost.
    public func restore(_ partition: PartitionName, to snapshot: String) async throws -> PartitionHead {
        try await restore(partition, to: snapshot, mode: .rollback, now: Date()).0
    }
}

/// Reads a partition's state in chunks, all from one consistent point (``version``).
public protocol StateReader: Sendable {
    var version: ServerVersion { get }
    var totalRows: Int64 { get }
    var totalBytes: Int64 { get }
    /// The next rows as stored (at most `maxRows`, stopping after `maxBytes`); empty at the end.
    func nextStored(maxRows: Int, maxBytes: Int) async throws -> [StoredStateRow]
    func close() async
}

extension StateReader {
    /// The next rows decoded as `insert` changes (tests and tools; a download passes the
    /// stored bytes through, ``StateRowsBuilder``).
    public func next(maxRows: Int, maxBytes: Int) async throws -> [RowChange] {
        try await nextStored(maxRows: maxRows, maxBytes: maxBytes).map { try $0.change() }
    }
}

/// One row of a partition's state as storage keeps it: its table, its key as
/// ``RowKey/encoded`` and its fields as ``FieldValue/encodedFields(_:)``.
public struct StoredStateRow: Sendable {
    public var table: String
    public var key: [UInt8]
    public var fields: [UInt8]

    public init(table: String, key: [UInt8], fields: [UInt8]) {
        self.table = table
        self.key = key
        self.fields = fields
    }

    /// The row decoded as an insert.
    public func change() throws(StorageError) -> RowChange {
        guard let key = try? RowKey.decode(key), let fields = try? FieldValue.decodeFields(fields) else { throw .corrupt("state") }
        return .insert(table, key, fields)
    }
}

extension StoredFields.Change {
    /// ``apply(_:to:)`` for a storage: a stored row that does not read is corrupt state.
    func applied(_ kind: RowChange.Kind, to row: [UInt8]?) throws(StorageError) -> StoredFields.Outcome {
        do { return try apply(kind, to: row) } catch { throw .corrupt("state") }
    }
}

/// Storage failures, with whether retrying may help.
public enum StorageError: Error, Sendable, CustomStringConvertible {
    case notFound(String)
    case corrupt(String)
    case unavailable(String)
    /// An upload read after a seq the server has not integrated (an earlier batch was lost).
    case uploadGap(integrated: Int64, after: Int64)
    /// The partition was restored, or sync terminated, since the session bound (its epoch
    /// changed): bind again.
    case fenced(String)

    public var isTransient: Bool {
        if case .unavailable = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .notFound(let what): "\(what) not found"
        case .corrupt(let what): "stored data is corrupt: \(what)"
        case .unavailable(let what): "storage unavailable: \(what)"
        case .uploadGap(let integrated, let after): "upload after seq \(after), but seq \(integrated) is the last integrated"
        case .fenced(let what): "\(what) was restored, or sync terminated, since this session bound"
        }
    }
}
