import Foundation
import TetherProtocol

/// The decisions of healing a restored partition from the fleet (docs/client-reset.md,
/// "Healing a restored server"), written once for both storages, which keep only their SQL.
/// Pure: a storage reads what a decision needs inside its transaction, asks, and writes.
///
/// The rule every decision serves: a row's final value is its view from the newest completed
/// contribution that vouched for it (its current value when none did), with every change
/// devices made to it since the restore (its *post-restore ops*) folded over that view by the
/// server-order row rules (``RowChange/write(rowExists:)``).
package enum HealPlan {
    /// A contribution as the storage keeps it (`heal_contributions`).
    package struct Contribution: Sendable, Hashable {
        package var viewVersion: Int64
        /// The server version of its last heal entry, 0 when it wrote none.
        package var lastVersion: Int64
        package var healedChanges: Int64
        package var isCompleted: Bool

        package init(viewVersion: Int64, lastVersion: Int64, healedChanges: Int64, isCompleted: Bool) {
            self.viewVersion = viewVersion
            self.lastVersion = lastVersion
            self.healedChanges = healedChanges
            self.isCompleted = isCompleted
        }
    }

    /// What the storage read to admit a chunk.
    package struct Facts: Sendable, Hashable {
        /// The partition's record (nil: none).
        package var record: HealRecord?
        /// The salt `heal_window` holds for the view's version (nil: none).
        package var windowSalt: Int64?
        /// This contribution's row, when an earlier chunk made one.
        package var contribution: Contribution?
        /// Whether some row was vouched for by a view older than this one (`heal_rows`
        /// holds a version below the view's).
        package var hasOlderVouchedRows: Bool
        /// The highest `last_version` of the partition's other contributions (0: none).
        package var otherContributionsHealedUntil: Int64
        /// The salt the partition's current history has at the view's version (nil: none, the
        /// version is past the head or its entry was compacted).
        package var historySalt: Int64?

        package init(
            record: HealRecord?, windowSalt: Int64?, contribution: Contribution?, hasOlderVouchedRows: Bool,
            otherContributionsHealedUntil: Int64, historySalt: Int64? = nil
        ) {
            self.record = record
            self.windowSalt = windowSalt
            self.historySalt = historySalt
            self.contribution = contribution
            self.hasOlderVouchedRows = hasOlderVouchedRows
            self.otherContributionsHealedUntil = otherContributionsHealedUntil
        }
    }

    /// What to do with a chunk before looking at its rows.
    package enum Decision: Sendable, Hashable {
        /// Answer `notWanted` with this reason (no heal open, or a view outside the window);
        /// nothing is written.
        case notWanted(String)
        /// Answer `covered` with this reason (a heal is open, the view adds nothing); nothing
        /// is written.
        case covered(String)
        /// The contribution completed earlier (a re-send): answer `completed` with its count.
        case completed(healedChanges: Int64)
        /// Another view was healed after the chunk's base: answer `rebase`.
        case rebase(String)
        /// Apply the chunk.
        case apply
    }

    /// A chunk's admission: the decision, and a lost version to note first when the server
    /// does not know the window (``HealRecord/lostUntil`` raised to it), whatever the decision.
    package struct Admission: Sendable, Hashable {
        package var decision: Decision
        /// The record's new ``HealRecord/lostUntil`` (nil: unchanged).
        package var lostUntil: Int64?
    }

    /// The answer a chunk gets without being applied, nil when it is to be applied;
    /// `healedSoFar` is what the contribution's earlier chunks healed.
    package static func answer(_ decision: Decision, to chunk: HealChunk, healedSoFar: Int64) -> HealReply? {
        func reply(_ outcome: HealReply.Outcome, _ count: Int64, _ reason: String = "") -> HealReply {
            HealReply(session: chunk.session, contribution: chunk.contribution, outcome: outcome, healedChanges: count, reason: reason)
        }
        switch decision {
        case .notWanted(let reason): return reply(.notWanted, 0, reason)
        case .covered(let reason): return reply(.covered, 0, reason)
        case .completed(let count): return reply(.completed, count)
        case .rebase(let reason): return reply(.rebase, healedSoFar, reason)
        case .apply: return nil
        }
    }

    /// Steps 1–4 of a chunk's admission.
    package static func admit(_ chunk: HealChunk, _ facts: Facts) -> Admission {
        guard let record = facts.record else { return Admission(decision: .notWanted("no heal is open"), lostUntil: nil) }
        guard record.isHealing else {
            return Admission(decision: .notWanted(record.mode == .rollback ? "the restore was a rollback" : "the heal is closed"), lostUntil: nil)
        }
        let view = chunk.view
        guard view.version > record.restoredTo else {
            return Admission(decision: .notWanted("the view is not after the restored version"), lostUntil: nil)
        }
        // A view on the history written since the restore (a device that reset onto it and
        // resets again, for another reason, while the heal is open) is not of the lost window:
        // its rows are what the server has or had after the restore, never data to put back.
        // The only test when the server does not know the window (a database put back).
        if let salt = facts.historySalt, salt == view.salt {
            return Admission(decision: .covered("the view is of the history since the restore"), lostUntil: nil)
        }
        // A known window: a view must be one of its versions, with its salt. A version of the
        // window whose salt the server no longer had (compacted before the restore) is taken on
        // the device's word: refusing it would lose what that device holds.
        if record.windowKnown, view.version > record.lostUntil || (facts.windowSalt.map { $0 != view.salt } ?? false) {
            return Admission(decision: .notWanted("not from the lost window"), lostUntil: nil)
        }
        let lostUntil = !record.windowKnown && view.version > record.lostUntil ? view.version : nil
        if let contribution = facts.contribution, contribution.isCompleted {
            return Admission(decision: .completed(healedChanges: contribution.healedChanges), lostUntil: lostUntil)
        }
        // Before "covered": a device whose state was fetched before another view was healed
        // fetches it again, even when it has nothing to add, so that its rewrite puts in the
        // store the rows that view healed (it held them a moment ago; without them until the
        // next download, an update or delete of one by an application would change nothing).
        if facts.otherContributionsHealedUntil > chunk.base {
            return Admission(
                decision: .rebase("another view was healed at version \(facts.otherContributionsHealedUntil), after the base \(chunk.base)"),
                lostUntil: lostUntil)
        }
        // Asked of a contribution's first chunk only: once one of its chunks was applied, its
        // rows are decided one by one (a newer view's rows are skipped), and it must complete,
        // or the rows it already put back would stand for a view that never vouched.
        if facts.contribution == nil && view.version <= record.healedTo && !facts.hasOlderVouchedRows {
            return Admission(decision: .covered("newer views cover it"), lostUntil: lostUntil)
        }
        return Admission(decision: .apply, lostUntil: lostUntil)
    }

    /// What a chunk's row does (step 6).
    package enum RowDecision: Sendable, Hashable {
        /// A view at least as new vouched for it already (or the row is unknown): nothing.
        case skip
        /// The view now vouches for the row (`heal_rows` gets the view's version), and the
        /// state gets `write` (nil: the row already has its value).
        case vouch(write: RowChange?)
    }

    /// The decision for one row of a chunk of view `view`: `change` is the view's row (an
    /// insert carrying every column, or a delete: absent in the view), `vouched` the version
    /// that vouched for the row so far (`heal_rows`, else ``HealRecord/healedTo``),
    /// `postRestoreOps` the row's changes since the restore in version order, `current` the
    /// row in the state now (nil: absent).
    package static func row(
        _ change: RowChange, view: Int64, vouched: Int64, postRestoreOps: [RowChange], current: [String: FieldValue]?
    ) -> RowDecision {
        guard vouched < view else { return .skip }
        let viewRow = change.kind == .delete ? nil : change.fields
        let target = fold(postRestoreOps, over: viewRow)
        return .vouch(write: write(table: change.table, key: change.key, from: current, to: target))
    }

    /// What a chunk's rows do (step 6 for each).
    package struct ChunkWrites: Sendable, Hashable {
        /// The rows the view now vouches for: `heal_rows` gets the view's version.
        package var vouched: [RowID] = []
        /// The writes that put the view back: one history entry (none when empty).
        package var writes: [RowChange] = []
    }

    /// Step 6 for a chunk of view `view`: its `rows` (skipping keys in `unknown`, this
    /// contribution's unknown keys), with `vouched` (`heal_rows` of the rows; a row missing
    /// from it was vouched by `healedTo`), the rows' `postRestoreOps` and `current` state
    /// (present rows only). A key listed twice counts once.
    package static func chunk(
        _ rows: Changeset, view: Int64, unknown: Set<RowID>, vouched: [RowID: Int64], healedTo: Int64,
        postRestoreOps: [RowID: [RowChange]], current: [RowID: [String: FieldValue]]
    ) -> ChunkWrites {
        var result = ChunkWrites()
        var seen: Set<RowID> = []
        for change in rows.changes {
            let id = RowID(table: change.table, key: change.key)
            guard !unknown.contains(id), seen.insert(id).inserted else { continue }
            let decision = row(
                change, view: view, vouched: vouched[id] ?? healedTo, postRestoreOps: postRestoreOps[id] ?? [], current: current[id])
            guard case .vouch(let write) = decision else { continue }
            result.vouched.append(id)
            if let write { result.writes.append(write) }
        }
        return result
    }

    /// A row of the state: its table and key.
    package struct RowID: Sendable, Hashable {
        package var table: String
        package var key: RowKey

        package init(table: String, key: RowKey) {
            self.table = table
            self.key = key
        }
    }

    /// The post-restore ops of `rows`: their changes in `entries` (the history entries after
    /// the restored version that devices uploaded, oldest first), in order.
    package static func postRestoreOps(of rows: Set<RowID>, in entries: [Changeset]) -> [RowID: [RowChange]] {
        var ops: [RowID: [RowChange]] = [:]
        for entry in entries {
            for change in entry.changes {
                let row = RowID(table: change.table, key: change.key)
                if rows.contains(row) { ops[row, default: []].append(change) }
            }
        }
        return ops
    }

    /// `ops` applied in order to `row` by the row rules (nil: absent).
    package static func fold(_ ops: [RowChange], over row: [String: FieldValue]?) -> [String: FieldValue]? {
        ops.reduce(row) { row, op in op.write(rowExists: row != nil).applied(to: row) }
    }

    /// The change that turns `current` into `target` (nil: none needed): an insert carrying
    /// every column of a row that is absent now, an update of the fields that differ (a column
    /// left out of a row is null), a delete.
    package static func write(table: String, key: RowKey, from current: [String: FieldValue]?, to target: [String: FieldValue]?) -> RowChange? {
        switch (current, target) {
        case (nil, nil): return nil
        case (nil, let target?): return .insert(table, key, target)
        case (_?, nil): return .delete(table, key)
        case (let current?, let target?):
            var differing: [String: FieldValue] = [:]
            for column in Set(current.keys).union(target.keys) {
                let value = target[column] ?? .null
                if value != current[column] ?? .null { differing[column] = value }
            }
            return differing.isEmpty ? nil : .update(table, key, differing)
        }
    }

    /// How `heal_rows` and the record change when a contribution of view `view` completes (step 7).
    package enum Completion: Sendable, Hashable {
        /// The view is the newest (or as new as the newest): rows it did not vouch for (its
        /// unknown ones) keep `previousHealedTo` explicitly; rows vouched below it are now
        /// implicitly vouched by it (their `heal_rows` go); ``HealRecord/healedTo`` becomes
        /// the view, and `heal_rows` at the view become implicit.
        case raise(previousHealedTo: Int64)
        /// An older view than the newest: rows vouched below it and not unknown to it are now
        /// vouched by it (their `heal_rows` set to the view).
        case lower
    }

    /// Step 7's case for a view (a view as new as ``HealRecord/healedTo`` raises: its rows
    /// vouched below it go, as for a newer one).
    package static func completion(view: Int64, healedTo: Int64) -> Completion {
        view >= healedTo ? .raise(previousHealedTo: healedTo) : .lower
    }

    /// The record after a contribution of view `view` completed.
    package static func completed(_ record: HealRecord, view: Int64) -> HealRecord {
        var record = record
        record.healedTo = max(record.healedTo, view)
        record.devices += 1
        return record
    }

    /// The record a restore (or a device ahead, or a restored backup) leaves for `window`.
    /// A rollback's record is closed at once.
    package static func record(
        _ partition: PartitionName, window: LostWindow, mode: RestoreMode, origin: HealRecord.Origin, now: Date
    ) -> HealRecord {
        HealRecord(
            partition: partition.rawValue, mode: mode, origin: origin, restoredTo: window.restoredTo, lostUntil: window.lostUntil,
            healedTo: window.restoredTo, devices: 0, healedChanges: 0, windowKnown: !window.salts.isEmpty, openedAt: now,
            closedAt: mode == .rollback ? now : nil)
    }

    /// Whether a restore from `before` to `snapshot` lost versions (then it leaves a record).
    package static func losesWindow(before: PartitionHead, snapshot: ServerVersion) -> Bool {
        before.latest.version > snapshot.version
    }

    /// The mode a restore's record gets: the asked one when the snapshot is on the partition's
    /// current line of history (`keepsHistory`: the history after it is what the restore drops);
    /// a rollback when it is not (a snapshot taken before an earlier restore went back past it,
    /// or whose history was compacted). The devices then hold another line than the snapshot's,
    /// and the server cannot tell what they give back from what the snapshot replaces.
    package static func effectiveMode(_ asked: RestoreMode, keepsHistory: Bool) -> RestoreMode {
        keepsHistory ? asked : .rollback
    }
}
