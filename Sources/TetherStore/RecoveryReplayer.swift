import GRDB
import TetherProtocol

/// What replaying unsynced local changes onto the server's state kept and dropped, by rule
/// (docs/contract.md: Recovery rules), in counts only.
package struct RecoveryReport: Sendable, Hashable {
    /// Rule 1: rows inserted on the device and never synced, kept.
    package var insertsKept = 0
    /// An insert of a key the server's state has: merged field by field (local fields win), kept.
    package var insertsMerged = 0
    /// Rule 2: updates of rows the server deleted, dropped (the delete wins).
    package var updatesDropped = 0
    /// Rule 3: deletes of rows still on the server, applied and kept.
    package var deletesKept = 0
    /// Deletes of rows the server's state does not have either: nothing to do, dropped.
    package var deletesDropped = 0
    /// Rules 4 and 5: updates of rows the server still has, applied field by field and kept.
    package var updatesKept = 0
    /// Rule 4: fields of kept updates and merged inserts whose local value replaced a different server value.
    package var fieldsLocalWon = 0
    /// Local changes before collapsing them per row (several edits of one row count once after).
    package var localChanges = 0

    package init() {}

    package var kept: Int { insertsKept + insertsMerged + deletesKept + updatesKept }
    package var dropped: Int { updatesDropped + deletesDropped }
}

/// Replays unsynced local changes onto the server's state (just written by the rewrite, in the
/// same transaction) by the recovery rules of docs/contract.md "Recovery rules" — which are the
/// row-apply rules (``RowWrite``) every change follows — and re-queues the kept ones in the
/// change log for upload. Each row's changes are first collapsed to their net effect, so
/// several local edits of one row replay as one change.
///
/// Every change is validated against the schema first: if one does not fit (the schema
/// changed under it), nothing is replayed and the error is thrown, so the caller can treat
/// recovery as impossible (docs/contract.md: Reset modes fallbacks).
enum RecoveryReplayer {
    static func replay(_ db: Database, schema: Schema, changes: [RowChange], keepingChangesOfAbsentRows keep: Bool = false) throws
        -> RecoveryReport
    {
        var report = RecoveryReport()
        report.localChanges = changes.count
        var collapsed: [RowChange] = []
        for change in Changeset(changes).collapsed().changes {
            // A net insert carries every column; updates only theirs.
            collapsed.append(try ChangeValidator.change(change, in: schema))
        }
        for change in collapsed { try replay(change, db: db, schema: schema, keep: keep, report: &report) }
        return report
    }

    /// Replays the change log's own entries (seq ≤ `snapshot.through`) one row at a time, without reading
    /// the log into memory (a reset's recovery of many unsynced changes), then drops them: the
    /// kept changes are logged again with new seqs. The log holds no values: each row's local
    /// values come from `snapshot`, taken before the rewrite. A change that does not fit the
    /// schema throws as in ``replay(_:schema:changes:)``, and the caller's transaction rolls
    /// back what was replayed before it. Rows replay in table and key order (rows are
    /// independent).
    static func replayLogged(
        _ db: Database, schema: Schema, snapshot: LoggedRowSnapshot, keepingChangesOfAbsentRows keep: Bool = false
    ) throws -> RecoveryReport {
        var report = RecoveryReport()
        try ChangeLog.forEachRow(db, through: snapshot.through) { entries in
            report.localChanges += entries.count
            guard let first = entries.first else { return }
            let row = try snapshot.values(db, first.table, first.key)
            let held = row == nil ? try HeldValues.fields(db, first.row) : nil
            try HeldValues.release(db, first.row)
            guard let net = LogEntry.net(entries, row: row, held: held) else { return }
            if net.kind != .delete, row == nil, net.kind == .insert || held == nil {
                // Removed by the server with nothing held (a local removal would be logged
                // after it): nothing local to replay.
                report.updatesDropped += 1
                return
            }
            try replay(try ChangeValidator.change(net, in: schema), db: db, schema: schema, keep: keep, report: &report)
        }
        try ChangeLog.trim(db, through: snapshot.through)
        return report
    }

    /// One row's net local change, validated, replayed onto the server's state.
    ///
    /// `keep`: the server is healing the window this store's state came from, so a row its
    /// state lacks now may come back with another device's view. An update or a delete of such
    /// a row is then kept and uploaded rather than dropped (the update's values held in
    /// `_tether_held`, as for a row the server deleted under a pending update): the server
    /// applies it after whatever view heals the row (docs/client-reset.md, "Healing a restored
    /// server"), and ignores it if none does, as the row rules say.
    private static func replay(_ change: RowChange, db: Database, schema: Schema, keep: Bool, report: inout RecoveryReport) throws {
        guard let table = schema.table(change.table) else { return }  // validated by the caller
        let server = try RowWriter.fetch(db, table, key: change.key)
        switch change.write(rowExists: server != nil) {
        case .insert(let fields):
            try RowWriter.insert(db, table, key: change.key, fields: fields)
            report.insertsKept += 1
        case .update(let fields):
            // Only the fields whose local value differs from the server's are written.
            let changed = fields.filter { server?[$0.key] != $0.value }
            report.fieldsLocalWon += changed.count
            try RowWriter.update(db, table, key: change.key, fields: changed)
            if change.kind == .insert { report.insertsMerged += 1 } else { report.updatesKept += 1 }
        case .delete:
            try RowWriter.delete(db, table, key: change.key)
            report.deletesKept += 1
        case .unchanged where keep:
            if change.kind == .delete {
                report.deletesKept += 1
            } else {
                try HeldValues.hold(db, LoggedRow(table: change.table, key: change.key), fields: change.fields)
                report.updatesKept += 1
            }
        case .unchanged:
            // An update or a delete of a row the server's state no longer has: dropped.
            if change.kind == .delete { report.deletesDropped += 1 } else { report.updatesDropped += 1 }
            return
        }
        try ChangeLog.append(db, change)
    }
}
