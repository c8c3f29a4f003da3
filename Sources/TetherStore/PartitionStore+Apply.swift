import GRDB
import TetherProtocol

/// What `apply` did, in counts (no row contents).
public struct ApplyReport: Sendable, Hashable {
    /// Entries applied, and entries skipped because their version was already integrated.
    public var versionsApplied = 0
    public var versionsSkipped = 0
    /// Server changes written, and skipped because of a pending local insert or delete of the row.
    public var changesApplied = 0
    public var changesSkipped = 0
    /// Fields a server change carried that kept their pending local value.
    public var fieldsKeptLocal = 0
    /// Local log entries dropped because the server had integrated them.
    public var localChangesTrimmed = 0
    /// The store's server version afterwards.
    public var serverVersion = ServerVersion.none

    public init() {}
}

extension PartitionStore {
    /// Applies downloaded history entries in order, in one transaction, without capturing them.
    /// An entry without changes acknowledges this store's own changes up to its
    /// `integratedClientSeq`.
    ///
    /// Per entry: entries at or below the store's server version are skipped (idempotent
    /// re-delivery); pending local changes with `seq <= integratedClientSeq` are dropped first;
    /// then each change is applied by the row-apply rules under the store's pending local
    /// changes (``DownloadWrite``; docs/sync-model.md: fields with pending local changes keep
    /// their local values; a delete of a row with a pending local insert, and an update or
    /// insert of a row with a pending local insert or delete, are skipped); then the server
    /// version and salt are recorded.
    ///
    /// Every change is validated against the schema first: a mismatch throws and nothing is applied.
    @discardableResult
    public func apply(_ entries: [DownloadEntry]) async throws(StoreError) -> ApplyReport {
        let schema = self.schema
        var validated = entries
        for index in validated.indices {
            for change in validated[index].changeset.changes.indices {
                validated[index].changeset.changes[change] = try ChangeValidator.change(
                    validated[index].changeset.changes[change], in: schema)
            }
        }
        let path = self.path
        return try await write { [validated] db in
            guard let meta = try MetaTable.fetch(db) else { throw StoreError.notAStore(path: path) }
            var report = ApplyReport()
            var current = meta.serverVersion
            var integrated = meta.integratedSeq
            try MetaTable.withApplyFlag(db) {
                for entry in validated {
                    guard entry.serverVersion.version > current.version else {
                        report.versionsSkipped += 1
                        continue
                    }
                    if entry.integratedClientSeq > integrated {
                        report.localChangesTrimmed += try ChangeLog.trim(db, through: entry.integratedClientSeq)
                        try MetaTable.raiseIntegratedSeq(db, to: entry.integratedClientSeq)
                        integrated = entry.integratedClientSeq
                    }
                    // Nothing is captured while the apply flag is set, so this holds for the entry.
                    let hasPending = try ChangeLog.hasPending(db)
                    for change in entry.changeset.changes {
                        guard let table = schema.table(change.table) else { continue }  // validated above
                        try Self.applyServerChange(change, table: table, hasPending: hasPending, db: db, report: &report)
                    }
                    try MetaTable.setServerVersion(db, entry.serverVersion)
                    current = entry.serverVersion
                    report.versionsApplied += 1
                }
            }
            report.serverVersion = current
            return report
        }
    }

    /// One server change, written by the rules for a row with pending local changes
    /// (``RowChange/write(rowExists:pending:)``).
    static func applyServerChange(
        _ change: RowChange, table: TableSchema, hasPending: Bool, db: Database, report: inout ApplyReport
    ) throws {
        if !hasPending, change.kind == .delete || !change.fields.isEmpty {
            // No local change to weigh: the row write is ``RowChange/write(rowExists:)``, done
            // without looking the row up first — an insert is an upsert, and an update or a
            // delete that finds no row changed nothing (skipped, as when the row is gone).
            let wrote = switch change.kind {
            case .insert: try { try RowWriter.upsert(db, table, key: change.key, fields: change.fields); return true }()
            case .update: try RowWriter.update(db, table, key: change.key, fields: change.fields)
            case .delete: try RowWriter.delete(db, table, key: change.key)
            }
            if wrote { report.changesApplied += 1 } else { report.changesSkipped += 1 }
            return
        }
        let pending = hasPending ? try ChangeLog.pendingNet(db, table: change.table, key: change.key) : nil
        let decision = change.write(rowExists: try RowWriter.exists(db, table, key: change.key), pending: pending)
        switch decision.write {
        case .insert(let fields): try RowWriter.insert(db, table, key: change.key, fields: fields)
        case .update(let fields): try RowWriter.update(db, table, key: change.key, fields: fields)
        case .delete: try RowWriter.delete(db, table, key: change.key)
        case .unchanged: break
        }
        report.fieldsKeptLocal += decision.fieldsKeptLocal
        if decision.isSkipped { report.changesSkipped += 1 } else { report.changesApplied += 1 }
    }
}
