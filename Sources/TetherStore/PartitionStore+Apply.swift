import GRDB
import TetherProtocol

/// What `apply` did, in counts (no row contents).
package struct ApplyReport: Sendable, Hashable {
    /// Entries applied, and entries skipped because their version was already integrated.
    package var versionsApplied = 0
    package var versionsSkipped = 0
    /// Server changes written, and skipped because of a pending local insert or delete of the row.
    package var changesApplied = 0
    package var changesSkipped = 0
    /// Fields a server change carried that kept their pending local value.
    package var fieldsKeptLocal = 0
    /// Local log entries dropped because the server had integrated them.
    package var localChangesTrimmed = 0
    /// The store's server version afterwards.
    package var serverVersion = ServerVersion.none
    /// Server changes written, per table (tables with none are left out): what an application
    /// hears in a `changes-applied` event.
    package var changesPerTable: [String: Int64] = [:]

    package init() {}
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
    /// Each change is read where it arrived (``ChangeRows``) and checked against the schema
    /// before it is written: a mismatch throws and the transaction — nothing of the download —
    /// is kept. A row without pending local changes is written in place by ``ChangeRowsWriter``
    /// (no dictionary per row); a row with some is decoded into a ``RowChange`` for the rules.
    @discardableResult
    package func apply(_ entries: [DownloadEntry]) async throws(StoreError) -> ApplyReport {
        let schema = self.schema
        let path = self.path
        return try await write { db in
            guard let meta = try MetaTable.fetch(db) else { throw StoreError.notAStore(path: path) }
            var report = ApplyReport()
            var current = meta.serverVersion
            var integrated = meta.integratedSeq
            try MetaTable.withApplyFlag(db) {
                // Pending local changes are weighed only when there are some and the download
                // carries changes (an acknowledgement carries none): then each changed row's log
                // entries not yet integrated, from the agent's own index of the log.
                let weighPending = try entries.contains { !$0.changes.isEmpty } && ChangeLog.hasPending(db)
                if weighPending { try ChangeLog.syncRowIndex(db) }
                var writer = ChangeRowsWriter(db: db, schema: schema, inserts: .merged)
                var upserts = WholeRowUpserts()
                for entry in entries {
                    guard entry.serverVersion.version > current.version else {
                        report.versionsSkipped += 1
                        continue
                    }
                    if entry.integratedClientSeq > integrated {
                        report.localChangesTrimmed += try ChangeLog.trim(db, through: entry.integratedClientSeq)
                        try MetaTable.raiseIntegratedSeq(db, to: entry.integratedClientSeq)
                        integrated = entry.integratedClientSeq
                    }
                    let rows = entry.changes
                    let perTable = try Self.applyChanges(
                        rows, db: db, schema: schema, writer: &writer, upserts: &upserts, weighPending: weighPending,
                        integrated: integrated, report: &report)
                    for (index, count) in perTable.enumerated() where count > 0 { report.changesPerTable[rows.tables[index], default: 0] += count }
                    try MetaTable.setServerVersion(db, entry.serverVersion)
                    current = entry.serverVersion
                    report.versionsApplied += 1
                }
            }
            report.serverVersion = current
            return report
        }
    }

    /// Writes one entry's changes by the rules ``apply(_:)`` describes (``ChangeRowsWriter``
    /// for a row without pending local changes, ``applyServerChange`` for one with some); the
    /// changes written per table of `rows`, by index. A subscription chunk's rows go the same
    /// way (``applySubscriptionChunk(_:finalSet:)``).
    static func applyChanges(
        _ rows: ChangeRows, db: Database, schema: Schema, writer: inout ChangeRowsWriter, upserts: inout WholeRowUpserts,
        weighPending: Bool, integrated: Int64, report: inout ApplyReport
    ) throws -> [Int64] {
        var perTable = [Int64](repeating: 0, count: rows.tables.count)
        if !weighPending { try writer.check(rows) }
        writer.begin(rows)
        try rows.withCursor { (cursor) throws in
            while let (kind, tableIndex, key) = cursor.nextChange() {
                var change: RowChange
                if weighPending {
                    change = try writer.decode(kind, table: tableIndex, key: key, &cursor, rows)
                } else {
                    switch try writer.write(kind, table: tableIndex, key: key, &cursor, rows) {
                    case .applied:
                        report.changesApplied += 1
                        if perTable.indices.contains(tableIndex) { perTable[tableIndex] += 1 }
                        continue
                    case .skipped: report.changesSkipped += 1; continue
                    case .decoded(let decoded): change = decoded
                    }
                }
                guard let table = schema.table(change.table) else { continue }  // checked when decoded
                let pending = weighPending
                    ? try ChangeLog.entries(db, of: LoggedRow(table: change.table, key: change.key)).filter { $0.seq > integrated }
                    : []
                let appliedBefore = report.changesApplied
                try applyServerChange(change, table: table, pending: pending, db: db, upserts: &upserts, report: &report)
                if report.changesApplied > appliedBefore, perTable.indices.contains(tableIndex) { perTable[tableIndex] += 1 }
            }
        }
        return perTable
    }

    /// One server change, written by the rules for a row with pending local changes
    /// (``RowChange/write(rowExists:pending:)``); `pending` are the row's log entries not yet
    /// integrated, in seq order.
    static func applyServerChange(
        _ change: RowChange, table: TableSchema, pending: [LogEntry], db: Database,
        upserts: inout WholeRowUpserts, report: inout ApplyReport
    ) throws {
        if pending.isEmpty, change.kind == .delete || !change.fields.isEmpty {
            // No local change to weigh: the row write is ``RowChange/write(rowExists:)``, done
            // without looking the row up first — an insert is an upsert (of the whole row, by a
            // statement prepared once per table, when it carries every column: what uploads
            // send), and an update or a delete that finds no row changed nothing (skipped, as
            // when the row is gone).
            let wrote = switch change.kind {
            case .insert where change.fields.count == table.valueColumns.count:
                try { try upserts.upsert(db, table, key: change.key, fields: change.fields); return true }()
            case .insert: try { try RowWriter.upsert(db, table, key: change.key, fields: change.fields); return true }()
            case .update: try RowWriter.update(db, table, key: change.key, fields: change.fields)
            case .delete: try RowWriter.delete(db, table, key: change.key)
            }
            if wrote { report.changesApplied += 1 } else { report.changesSkipped += 1 }
            return
        }
        let id = LoggedRow(table: change.table, key: change.key)
        let (row, held) = try RowValues.current(db, table, id)
        // The local net change with its values: the row's own, or those held since the server
        // deleted the row.
        let local = LogEntry.net(pending, row: row, held: held)
        let decision = change.write(rowExists: row != nil, pending: local)
        switch decision.write {
        case .insert(let fields):
            try RowWriter.insert(db, table, key: change.key, fields: fields)
            if held != nil { try HeldValues.release(db, id) }  // back in the row
        case .update(let fields): try RowWriter.update(db, table, key: change.key, fields: fields)
        case .delete:
            // A pending local update outlives the row (it is uploaded, and a server insert that
            // re-creates the row gets its fields): its values are kept aside.
            if let local, local.kind == .update, !local.fields.isEmpty { try HeldValues.hold(db, id, fields: local.fields) }
            try RowWriter.delete(db, table, key: change.key)
        case .unchanged: break
        }
        report.fieldsKeptLocal += decision.fieldsKeptLocal
        if decision.isSkipped { report.changesSkipped += 1 } else { report.changesApplied += 1 }
    }
}
