import Foundation
import TetherProtocol

/// Everything the sync server keeps durably, implemented by ``SQLiteServerStorage`` and
/// ``PostgresServerStorage``: the composition of the roles its callers hold (``PolicyStorage``,
/// ``HistoryReading``, ``IntegrationStorage``, ``HealStorage``, ``AdminStorage``,
/// ``HousekeepingStorage``, ``DeviceLedgerStorage``, ``IdentityStorage``, ``DeviceActionStorage``), for the app's wiring, which hands each
/// caller its role (``StorageRoles``) and closes the storage at the end. The rules both
/// implementations share are written once (``UploadSequencing``, ``HistoryInvariant``,
/// ``PartitionRules``, ``ServerFlags/metaRows``), so each keeps only its SQL. Every method that
/// returns has committed (and fsynced) its changes.
package protocol ServerStorage:
    PolicyStorage, HistoryReading, IntegrationStorage, HealStorage, AdminStorage, HousekeepingStorage, DeviceLedgerStorage,
    IdentityStorage, DeviceActionStorage
{
    func close() async throws
}

/// Reads a partition's state in chunks, all from one consistent point (``version``).
package protocol StateReader: Sendable {
    var version: ServerVersion { get }
    /// The partition's rows and their bytes at ``version``, for a download's progress (0 for a
    /// subscription change's read, which reports none).
    var totalRows: Int64 { get }
    var totalBytes: Int64 { get }
    /// Tables whose rows this reader returns are exactly those its scope holds (read through an
    /// exact plan of the filter index, ``IndexPlan/exact``): a one-scope state read need not
    /// evaluate the filters on them.
    var exactTables: Set<String> { get }
    /// The next rows as stored (at most `maxRows`, stopping after `maxBytes`); empty at the end.
    func nextStored(maxRows: Int, maxBytes: Int) async throws -> [StoredStateRow]
    func close() async
}

extension StateReader {
    /// Readers that select nothing through the index.
    package var exactTables: Set<String> { [] }

    /// The next rows decoded as `insert` changes (tests and tools; a download passes the
    /// stored bytes through, ``StateRowsBuilder``).
    package func next(maxRows: Int, maxBytes: Int) async throws -> [RowChange] {
        try await nextStored(maxRows: maxRows, maxBytes: maxBytes).map { try $0.change() }
    }
}

/// One row of a partition's state as storage keeps it: its table, its key as
/// ``RowKey/encoded`` and its fields as ``FieldValue/encodedFields(_:)``.
package struct StoredStateRow: Sendable {
    package var table: String
    package var key: [UInt8]
    package var fields: [UInt8]

    package init(table: String, key: [UInt8], fields: [UInt8]) {
        self.table = table
        self.key = key
        self.fields = fields
    }

    /// The row decoded as an insert.
    package func change() throws(StorageError) -> RowChange {
        do {
            return try RowChange.insert(table, RowKey.decode(key), FieldValue.decodeFields(fields))
        } catch {
            throw .corrupt("state")
        }
    }
}

extension StoredFields.Change {
    /// ``apply(_:to:)`` for a storage: a stored row that does not read is corrupt state.
    func applied(_ kind: RowChange.Kind, to row: [UInt8]?) throws(StorageError) -> StoredFields.Outcome {
        do { return try apply(kind, to: row) } catch { throw .corrupt("state") }
    }
}

/// Storage failures, with whether retrying may help.
package enum StorageError: Error, Sendable, CustomStringConvertible {
    case notFound(String)
    case corrupt(String)
    case unavailable(String)
    /// An upload read after a seq the server has not integrated (an earlier batch was lost).
    case uploadGap(integrated: Int64, after: Int64)
    /// The partition was restored, or sync terminated, since the session bound (its epoch
    /// changed): bind again.
    case fenced(String)

    package var isTransient: Bool {
        if case .unavailable = self { return true }
        return false
    }

    package var description: String {
        switch self {
        case .notFound(let what): "\(what) not found"
        case .corrupt(let what): "stored data is corrupt: \(what)"
        case .unavailable(let what): "storage unavailable: \(what)"
        case .uploadGap(let integrated, let after): "upload after seq \(after), but seq \(integrated) is the last integrated"
        case .fenced(let what): "\(what) was restored, or sync terminated, since this session bound"
        }
    }
}
