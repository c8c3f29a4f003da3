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
    /// then each change is applied by the row-apply rules (``RowWrite``) under the store's
    /// pending local changes (docs/sync-model.md: fields with pending local changes keep their
    /// local values; a delete of a row with a pending local insert, and an update or insert of
    /// a row with a pending local delete, are skipped); then the server version and salt are recorded.
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

    /// One server change. The store's pending local changes of the row come later in server
    /// order, so they win: what they set is left alone, and the rest of the change is written
    /// by the row-apply rules (``RowChange/write(rowExists:)``).
    static func applyServerChange(
        _ change: RowChange, table: TableSchema, hasPending: Bool, db: Database, report: inout ApplyReport
    ) throws {
        let pending = hasPending ? try ChangeLog.pendingNet(db, table: change.table, key: change.key) : nil
        switch (change.kind, pending?.kind) {
        case (.delete, .insert?), (.insert, .delete?), (.update, .delete?):
            // The local insert re-creates the row, or the local delete removes it, later.
            report.changesSkipped += 1
            return
        case (.insert, .insert?), (.update, .insert?):
            // A pending insert sets every field later.
            report.changesSkipped += 1
            report.fieldsKeptLocal += change.fields.count
            return
        default:
            break
        }
        let local: [String: FieldValue] = change.kind == .delete ? [:] : pending?.fields ?? [:]
        var remaining = change
        for name in local.keys where remaining.fields.removeValue(forKey: name) != nil {
            report.fieldsKeptLocal += 1
        }
        switch remaining.write(rowExists: try RowWriter.exists(db, table, key: change.key)) {
        case .insert(let fields):
            // Pending local updates of this key (the server deleted the row) come later: they win.
            try RowWriter.insert(db, table, key: change.key, fields: fields.merging(local) { $1 })
        case .update(let fields):
            try RowWriter.update(db, table, key: change.key, fields: fields)
        case .delete:
            try RowWriter.delete(db, table, key: change.key)
        case .unchanged:
            break
        }
        report.changesApplied += 1
    }
}
