import Foundation
import Testing
import TetherProtocol
@testable import TetherServer

/// ``HealPlan``: the admission of a chunk, every combination of a row's view, current value,
/// post-restore ops and vouched version, and the completion's decisions.
@Suite struct HealPlanTests {
    typealias Fields = [String: FieldValue]
    static let key = RowKey.integer(7)
    static let now = Date(timeIntervalSince1970: 1_000)

    // MARK: Rows

    /// The view's row: present (every column) or absent.
    enum ViewRow: CaseIterable { case present, absent }
    enum CurrentRow: CaseIterable { case present, absent, equalToTarget }
    /// The row's post-restore ops.
    enum Ops: CaseIterable { case none, update, insert, delete, deleteThenInsert, updateOfAbsentRow }
    /// The row's vouched version against the view's (5).
    enum Vouched: CaseIterable { case below, at, above }

    static let viewFields: Fields = ["a": .integer(1), "b": .text("view"), "c": .null]
    static let currentFields: Fields = ["a": .integer(2), "b": .text("now"), "c": .integer(9)]

    func ops(_ kind: Ops) -> [RowChange] {
        switch kind {
        case .none: []
        case .update: [.update("t", Self.key, ["b": .text("post")])]
        case .insert: [.insert("t", Self.key, ["a": .integer(3), "b": .text("ins"), "c": .null])]
        case .delete: [.delete("t", Self.key)]
        case .deleteThenInsert: [.delete("t", Self.key), .insert("t", Self.key, ["a": .integer(4), "b": .null, "c": .real(1.5)])]
        case .updateOfAbsentRow: [.delete("t", Self.key), .update("t", Self.key, ["a": .integer(5)])]
        }
    }

    /// The rule written out by hand, case by case (not with ``RowWrite``): the row the fold gives.
    func expectedTarget(view: ViewRow, ops kind: Ops) -> Fields? {
        switch (kind, view) {
        case (.none, .present): Self.viewFields
        case (.none, .absent): nil
        case (.update, .present): ["a": .integer(1), "b": .text("post"), "c": .null]
        case (.update, .absent): nil
        case (.insert, _): ["a": .integer(3), "b": .text("ins"), "c": .null]
        case (.delete, _): nil
        case (.deleteThenInsert, _): ["a": .integer(4), "b": .null, "c": .real(1.5)]
        case (.updateOfAbsentRow, _): nil
        }
    }

    func normalized(_ row: Fields?) -> Fields? { row?.filter { !$0.value.isNull } }

    @Test(arguments: ViewRow.allCases, CurrentRow.allCases)
    func everyCombinationPutsTheRuleBack(view: ViewRow, current: CurrentRow) {
        for kind in Ops.allCases {
            for vouched in Vouched.allCases {
                let change: RowChange = view == .present ? .insert("t", Self.key, Self.viewFields) : .delete("t", Self.key)
                let target = expectedTarget(view: view, ops: kind)
                let currentRow: Fields? = switch current {
                case .present: Self.currentFields
                case .absent: nil
                case .equalToTarget: target
                }
                let vouchedVersion: Int64 = switch vouched {
                case .below: 4
                case .at: 5
                case .above: 6
                }
                let decision = HealPlan.row(change, view: 5, vouched: vouchedVersion, postRestoreOps: ops(kind), current: currentRow)
                let label = "view \(view), current \(current), ops \(kind), vouched \(vouched)"
                guard vouched == .below else {
                    #expect(decision == .skip, "\(label)")
                    continue
                }
                guard case .vouch(let write) = decision else {
                    Issue.record("\(label): skipped")
                    continue
                }
                let after = write.map { $0.write(rowExists: currentRow != nil).applied(to: currentRow) } ?? currentRow
                #expect(normalized(after) == normalized(target), "\(label)")
                if normalized(currentRow) == normalized(target) { #expect(write == nil, "\(label): no write needed") }
                switch (currentRow, target, write?.kind) {
                case (nil, _?, let kind): #expect(kind == .insert && write?.fields == target, "\(label): an insert with every column")
                case (_?, nil, let kind): #expect(kind == .delete, "\(label)")
                case (let now?, _?, .update?):
                    for (column, value) in write!.fields { #expect(now[column] ?? .null != value, "\(label): only differing fields") }
                default: break
                }
            }
        }
    }

    @Test func aColumnMissingFromTheTargetIsSetToNull() {
        let write = HealPlan.write(table: "t", key: Self.key, from: ["a": .integer(1), "b": .integer(2)], to: ["a": .integer(1)])
        #expect(write == .update("t", Self.key, ["b": .null]))
        #expect(HealPlan.write(table: "t", key: Self.key, from: ["a": .integer(1), "b": .null], to: ["a": .integer(1)]) == nil)
    }

    @Test func aChunkSkipsUnknownAndRepeatedKeysAndVouchesTheOthers() {
        let a = HealPlan.RowID(table: "t", key: .integer(1)), b = HealPlan.RowID(table: "t", key: .integer(2))
        let c = HealPlan.RowID(table: "t", key: .integer(3)), d = HealPlan.RowID(table: "t", key: .integer(4))
        let rows = Changeset([
            .insert("t", a.key, ["x": .integer(1)]), .insert("t", a.key, ["x": .integer(2)]), .delete("t", b.key),
            .insert("t", c.key, ["x": .integer(3)]), .delete("t", d.key),
        ])
        let plan = HealPlan.chunk(
            rows, view: 5, unknown: [b], vouched: [c: 7], healedTo: 3, postRestoreOps: [:],
            current: [a: ["x": .integer(1)], b: ["x": .integer(0)], d: ["x": .integer(4)]])
        #expect(plan.vouched == [a, d])
        #expect(plan.writes == [.delete("t", d.key)])
    }

    @Test func postRestoreOpsKeepTheChunksRowsInOrder() {
        let a = HealPlan.RowID(table: "t", key: .integer(1))
        let entries = [
            Changeset([.update("t", a.key, ["x": .integer(1)]), .insert("u", a.key, [:])]),
            Changeset([.delete("t", .integer(2)), .delete("t", a.key)]),
        ]
        #expect(HealPlan.postRestoreOps(of: [a], in: entries) == [a: [.update("t", a.key, ["x": .integer(1)]), .delete("t", a.key)]])
    }

    // MARK: Admission

    func record(mode: RestoreMode = .heal, closed: Bool = false, windowKnown: Bool = true, healedTo: Int64 = 10) -> HealRecord {
        HealRecord(
            partition: "p", mode: mode, origin: .snapshotRestore, restoredTo: 10, lostUntil: 20, healedTo: healedTo, devices: 0,
            healedChanges: 0, windowKnown: windowKnown, openedAt: Self.now, closedAt: closed ? Self.now : nil)
    }

    func chunk(view: Int64 = 15, salt: Int64 = 150, base: Int64 = 30) -> HealChunk {
        HealChunk.offer(session: SessionID(1), contribution: 9, view: ServerVersion(version: view, salt: salt), base: base)
    }

    func facts(
        _ record: HealRecord?, windowSalt: Int64? = 150, contribution: HealPlan.Contribution? = nil, older: Bool = false, others: Int64 = 0,
        historySalt: Int64? = nil
    ) -> HealPlan.Facts {
        HealPlan.Facts(
            record: record, windowSalt: windowSalt, contribution: contribution, hasOlderVouchedRows: older,
            otherContributionsHealedUntil: others, historySalt: historySalt)
    }

    func isNotWanted(_ admission: HealPlan.Admission) -> Bool {
        if case .notWanted = admission.decision { true } else { false }
    }

    /// Declined while a heal is open: the device keeps its changes of rows the server lacks.
    func isCovered(_ admission: HealPlan.Admission) -> Bool {
        if case .covered = admission.decision { true } else { false }
    }

    @Test func noOpenHealWantsNothing() {
        #expect(isNotWanted(HealPlan.admit(chunk(), facts(nil))))
        #expect(isNotWanted(HealPlan.admit(chunk(), facts(record(closed: true)))))
        #expect(isNotWanted(HealPlan.admit(chunk(), facts(record(mode: .rollback)))))
    }

    @Test func aViewAtOrBeforeTheRestoredVersionIsNotWanted() {
        #expect(isNotWanted(HealPlan.admit(chunk(view: 10), facts(record()))))
        #expect(HealPlan.admit(chunk(view: 11), facts(record(), windowSalt: 150)).decision == .apply)
    }

    @Test func aKnownWindowWantsOnlyItsOwnSalts() {
        #expect(isNotWanted(HealPlan.admit(chunk(salt: 151), facts(record()))))
        // Past the window's end: another line of history.
        #expect(isNotWanted(HealPlan.admit(chunk(view: 21), facts(record(), windowSalt: nil))))
        // A version of the window whose salt was compacted away before the restore: taken.
        #expect(HealPlan.admit(chunk(), facts(record(), windowSalt: nil)).decision == .apply)
        #expect(HealPlan.admit(chunk(), facts(record())) == HealPlan.Admission(decision: .apply, lostUntil: nil))
    }

    @Test func anUnknownWindowTakesAnySaltAndNotesAHigherLostVersion() {
        #expect(HealPlan.admit(chunk(view: 25, salt: 1), facts(record(windowKnown: false), windowSalt: nil))
            == HealPlan.Admission(decision: .apply, lostUntil: 25))
        #expect(HealPlan.admit(chunk(view: 15, salt: 1), facts(record(windowKnown: false), windowSalt: nil))
            == HealPlan.Admission(decision: .apply, lostUntil: nil))
        // Noted even when the view is not wanted.
        let covered = HealPlan.admit(chunk(view: 25, salt: 1), facts(record(windowKnown: false, healedTo: 26), windowSalt: nil))
        #expect(isCovered(covered) && covered.lostUntil == 25)
    }

    @Test func aViewOnTheHistorySinceTheRestoreIsNotWanted() {
        // A device that reset onto the history written since the restore and resets again
        // (sync terminated, say) while the heal is open: known window or not, its view is not
        // of the window, even where the window's salt for that version was compacted away.
        for (known, windowSalt) in [(false, Int64?.none), (true, Int64?.none), (true, Int64?(150))] {
            let admission = HealPlan.admit(
                chunk(view: 15, salt: 150), facts(record(windowKnown: known), windowSalt: windowSalt, historySalt: 150))
            #expect(isCovered(admission) && admission.lostUntil == nil, "known \(known), window salt \(String(describing: windowSalt))")
        }
        // The history has another salt at that version: the view may be of the window.
        #expect(HealPlan.admit(chunk(view: 15, salt: 1), facts(record(windowKnown: false), windowSalt: nil, historySalt: 150)).decision == .apply)
    }

    @Test func aCompletedContributionAnswersWithItsCount() {
        let done = HealPlan.Contribution(viewVersion: 15, lastVersion: 31, healedChanges: 4, isCompleted: true)
        #expect(HealPlan.admit(chunk(), facts(record(healedTo: 18), contribution: done, others: 40)).decision == .completed(healedChanges: 4))
    }

    @Test func newerViewsCoverAnOlderViewUnlessSomeRowIsVouchedBelowIt() {
        #expect(isCovered(HealPlan.admit(chunk(view: 15), facts(record(healedTo: 18)))))
        #expect(isCovered(HealPlan.admit(chunk(view: 18), facts(record(healedTo: 18)))))
        #expect(HealPlan.admit(chunk(view: 15), facts(record(healedTo: 18), older: true)).decision == .apply)
        // A contribution under way goes on: it must complete for the rows it already put back.
        let started = HealPlan.Contribution(viewVersion: 15, lastVersion: 20, healedChanges: 1, isCompleted: false)
        #expect(HealPlan.admit(chunk(view: 15), facts(record(healedTo: 18), contribution: started)).decision == .apply)
    }

    /// Even a view newer ones cover is asked to fetch again when another view was healed after
    /// its base: its rewrite must hold the rows that view healed.
    @Test func aCoveredViewWhoseBaseIsOlderThanAHealIsAskedToRebaseFirst() {
        guard case .rebase = HealPlan.admit(chunk(view: 15, base: 30), facts(record(healedTo: 18), others: 31)).decision else {
            Issue.record("expected a rebase")
            return
        }
        #expect(isCovered(HealPlan.admit(chunk(view: 15, base: 31), facts(record(healedTo: 18), others: 31))))
    }

    @Test func anotherViewHealedAfterTheBaseAsksForARebase() {
        guard case .rebase = HealPlan.admit(chunk(base: 30), facts(record(), others: 31)).decision else {
            Issue.record("expected a rebase")
            return
        }
        #expect(HealPlan.admit(chunk(base: 31), facts(record(), others: 31)).decision == .apply)
        // Its own earlier chunks do not count: only other contributions' last versions are given.
        let own = HealPlan.Contribution(viewVersion: 15, lastVersion: 40, healedChanges: 2, isCompleted: false)
        #expect(HealPlan.admit(chunk(base: 30), facts(record(), contribution: own)).decision == .apply)
    }

    // MARK: Completion and records

    @Test func completionRaisesForANewerViewAndLowersForAnOlderOne() {
        #expect(HealPlan.completion(view: 15, healedTo: 10) == .raise(previousHealedTo: 10))
        #expect(HealPlan.completion(view: 15, healedTo: 15) == .raise(previousHealedTo: 15))
        #expect(HealPlan.completion(view: 12, healedTo: 15) == .lower)
        let raised = HealPlan.completed(record(healedTo: 12), view: 15)
        #expect(raised.healedTo == 15 && raised.devices == 1)
        let kept = HealPlan.completed(raised, view: 13)
        #expect(kept.healedTo == 15 && kept.devices == 2)
    }

    @Test func aRestoreRecordsItsWindowAndARollbackIsClosedAtOnce() {
        let partition = PartitionName("p")!
        let window = LostWindow(restoredTo: 4, lostUntil: 9, salts: [5: 50])
        let heal = HealPlan.record(partition, window: window, mode: .heal, origin: .snapshotRestore, now: Self.now)
        #expect(heal.isHealing && heal.healedTo == 4 && heal.lostUntil == 9 && heal.windowKnown && heal.devices == 0)
        let rollback = HealPlan.record(
            partition, window: LostWindow(restoredTo: 4, lostUntil: 9, salts: [:]), mode: .rollback, origin: .backupRestore, now: Self.now)
        #expect(!rollback.isHealing && rollback.closedAt == Self.now && !rollback.windowKnown)
        let head = PartitionHead(latest: ServerVersion(version: 9, salt: 90), base: .none)
        #expect(HealPlan.losesWindow(before: head, snapshot: ServerVersion(version: 4, salt: 40)))
        #expect(!HealPlan.losesWindow(before: head, snapshot: ServerVersion(version: 9, salt: 90)))
    }
}
