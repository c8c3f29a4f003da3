import Foundation
import Testing
import TetherProtocol
import TetherServer

/// When a store binds at a version the history does not hold: whether the server opens a heal
/// (a database put back without its knowledge), raises a window's known end, or does nothing.
@Suite struct HealDetectionTests {
    let started = Date(timeIntervalSince1970: 1_000_000)
    func head(_ latest: Int64) -> PartitionHead {
        PartitionHead(latest: ServerVersion(version: latest, salt: 7), base: .none)
    }
    /// A rollback restore's record, closed as it opened, its lost versions' salts known.
    func rollback(restoredTo: Int64, lostUntil: Int64, opened: Date) -> HealRecord {
        HealRecord(
            partition: "p", mode: .rollback, origin: .snapshotRestore, restoredTo: restoredTo, lostUntil: lostUntil, healedTo: restoredTo,
            devices: 0, healedChanges: 0, windowKnown: true, openedAt: opened, closedAt: opened)
    }
    func record(restoredTo: Int64 = 10, lostUntil: Int64 = 20, known: Bool = false, opened: Date, closed: Date? = nil) -> HealRecord {
        HealRecord(
            partition: "p", mode: .heal, origin: .devicesAhead, restoredTo: restoredTo, lostUntil: lostUntil, healedTo: restoredTo,
            devices: 0, healedChanges: 0, windowKnown: known, openedAt: opened, closedAt: closed)
    }

    @Test func aVersionPastTheHeadOpensAHealFromWhereTheHistoryEndedAtStart() {
        // Started at 10; two uploads since (12): they are after the restore, not part of the window.
        let verdict = HealDetection.verdict(reported: 15, inHistory: false, head: head(12), record: nil, headAtStart: 10, startedAt: started)
        #expect(verdict == .open(LostWindow(restoredTo: 10, lostUntil: 15, salts: [:])))
        // A partition this process has not seen at start: the history's end now.
        #expect(
            HealDetection.verdict(reported: 15, inHistory: false, head: head(12), record: nil, headAtStart: nil, startedAt: started)
                == .open(LostWindow(restoredTo: 12, lostUntil: 15, salts: [:])))
    }

    @Test func aVersionUpToTheHistorysEndAtStartOpensNothing() {
        // Another salt at a version the history held at start is what every restore leaves behind.
        #expect(HealDetection.verdict(reported: 10, inHistory: false, head: head(12), record: nil, headAtStart: 10, startedAt: started) == .nothing)
        #expect(HealDetection.verdict(reported: 3, inHistory: false, head: head(12), record: nil, headAtStart: 10, startedAt: started) == .nothing)
    }

    @Test func aVersionThisProcessIssuedWithAnotherSaltOpensAHeal() {
        // Started at 10; a device that was behind reconnected first and uploaded up to 14; a
        // device at 12 of the lost line binds after it: the window is found all the same.
        #expect(
            HealDetection.verdict(reported: 12, inHistory: false, head: head(14), record: nil, headAtStart: 10, startedAt: started)
                == .open(LostWindow(restoredTo: 10, lostUntil: 12, salts: [:])))
        // With its own salt it is on the current line (an identity the server does not know: 208).
        #expect(HealDetection.verdict(reported: 12, inHistory: true, head: head(14), record: nil, headAtStart: 10, startedAt: started) == .nothing)
        let open = record(opened: started.addingTimeInterval(5), closed: nil)
        #expect(HealDetection.verdict(reported: 25, inHistory: true, head: head(30), record: open, headAtStart: 10, startedAt: started) == .nothing)
    }

    @Test func anOpenWindowOfUnknownEndIsRaised() {
        let open = record(opened: started.addingTimeInterval(5))
        #expect(HealDetection.verdict(reported: 25, inHistory: false, head: head(12), record: open, headAtStart: 10, startedAt: started) == .raise(25))
        #expect(HealDetection.verdict(reported: 18, inHistory: false, head: head(12), record: open, headAtStart: 10, startedAt: started) == .nothing)
        // A window whose lost versions are known is not raised by a device's say-so.
        let known = record(known: true, opened: started.addingTimeInterval(5))
        #expect(HealDetection.verdict(reported: 25, inHistory: false, head: head(12), record: known, headAtStart: 10, startedAt: started) == .nothing)
    }

    @Test func aRecordOfThisProcessIsNotOpenedAgainButOneFromAnEarlierLifeIs() {
        let closedNow = record(opened: started.addingTimeInterval(5), closed: started.addingTimeInterval(9))
        #expect(HealDetection.verdict(reported: 25, inHistory: false, head: head(12), record: closedNow, headAtStart: 10, startedAt: started) == .nothing)
        let earlier = record(opened: started.addingTimeInterval(-500), closed: started.addingTimeInterval(-400))
        #expect(
            HealDetection.verdict(reported: 25, inHistory: false, head: head(12), record: earlier, headAtStart: 10, startedAt: started)
                == .open(LostWindow(restoredTo: 10, lostUntil: 25, salts: [:])))
        // Not past what that earlier record already knew was lost.
        #expect(HealDetection.verdict(reported: 19, inHistory: false, head: head(12), record: earlier, headAtStart: 10, startedAt: started) == .nothing)
    }

    /// An earlier rollback lost versions 11…20 (salts known). After it the numbers were issued
    /// again on a new line, and the database was later put back to version 10 of that line: a
    /// device at 19 of the new line is ahead, one at 19 of the rolled-back line is a leftover
    /// (soak seed 993829452).
    @Test func aVersionAnEarlierRollbackLostIsALeftoverOnlyWithOneOfItsLostSalts() {
        let rollback = rollback(restoredTo: 10, lostUntil: 20, opened: started.addingTimeInterval(-500))
        #expect(
            HealDetection.verdict(
                reported: 19, inHistory: false, head: head(12), record: rollback, lostByRecord: false, headAtStart: 10, startedAt: started)
                == .open(LostWindow(restoredTo: 10, lostUntil: 19, salts: [:])))
        #expect(
            HealDetection.verdict(
                reported: 19, inHistory: false, head: head(12), record: rollback, lostByRecord: true, headAtStart: 10, startedAt: started)
                == .nothing)
    }

    /// A heal opened by devices ahead of a database put back, still open (nobody ran
    /// `heal-done`), whose window's end is unknown: (1) a device that has not reset since
    /// (its client file last bound before the record opened) raises that window's end, as
    /// before; (2) one that bound to the history written since that restore, and is now ahead
    /// of a database put back *again*, opens a new window from where the history ended at this
    /// start — raising the old one would have taken the history since its restore for writes
    /// made after a restore, and kept them over the devices' newer values (soak seed 961973229).
    @Test func aDeviceThatBoundSinceAnOpenHealOpenedIsAheadOfANewRestore() {
        let opened = started.addingTimeInterval(-300)
        let open = record(restoredTo: 10, lostUntil: 20, opened: opened)
        // Put back again: the history ended at 40 at this start; devices synced to 45.
        let sameLoss = HealDetection.verdict(
            reported: 45, inHistory: false, head: head(40), record: open, headAtStart: 40, startedAt: started,
            clientFileLastSeen: opened.addingTimeInterval(-60))
        #expect(sameLoss == .raise(45))
        let newLoss = HealDetection.verdict(
            reported: 45, inHistory: false, head: head(40), record: open, headAtStart: 40, startedAt: started,
            clientFileLastSeen: opened.addingTimeInterval(60))
        #expect(newLoss == .open(LostWindow(restoredTo: 40, lostUntil: 45, salts: [:])))
        // Within the old window's numbers too: not a leftover of it.
        let raisedHigh = record(restoredTo: 10, lostUntil: 60, opened: opened)
        #expect(
            HealDetection.verdict(
                reported: 45, inHistory: false, head: head(40), record: raisedHigh, headAtStart: 40, startedAt: started,
                clientFileLastSeen: opened.addingTimeInterval(60))
                == .open(LostWindow(restoredTo: 40, lostUntil: 45, salts: [:])))
        // An unknown client file says nothing: the old rules.
        #expect(
            HealDetection.verdict(reported: 45, inHistory: false, head: head(40), record: raisedHigh, headAtStart: 40, startedAt: started)
                == .nothing)
        // Opened in this process's life: no database was put back since; nothing new.
        let openedNow = record(restoredTo: 10, lostUntil: 20, opened: started.addingTimeInterval(5))
        #expect(
            HealDetection.verdict(
                reported: 45, inHistory: false, head: head(40), record: openedNow, headAtStart: 10, startedAt: started,
                clientFileLastSeen: started.addingTimeInterval(6))
                == .nothing)
    }

    /// Soak seed 391972695: rolled back from 1398 to 1070, then from 1113 to 194; the server
    /// restarted at 264; a device put back from an image made before the first rollback binds
    /// at 1354. Only the second restore is the record (its window 195...1113): without the
    /// first one's lost versions the device was taken for a database put back behind the
    /// server's back, and its stale view was healed into the partition.
    @Test func aVersionAnEarlierRestoreLostOpensNothing() {
        let second = rollback(restoredTo: 194, lostUntil: 1113, opened: started.addingTimeInterval(-30))
        #expect(
            HealDetection.verdict(
                reported: 1354, inHistory: false, head: head(276), record: second, lostByRecord: false, lostByARestore: true,
                headAtStart: 264, startedAt: started) == .nothing)
        // A version no restore lost with the store's salt is still evidence of a database put back.
        #expect(
            HealDetection.verdict(
                reported: 1354, inHistory: false, head: head(276), record: second, lostByRecord: false, lostByARestore: false,
                headAtStart: 264, startedAt: started) == .open(LostWindow(restoredTo: 264, lostUntil: 1354, salts: [:])))
        // An open window of unknown end is not raised by an earlier restore's leftover either.
        let open = record(opened: started.addingTimeInterval(5))
        #expect(
            HealDetection.verdict(
                reported: 25, inHistory: false, head: head(12), record: open, lostByARestore: true, headAtStart: 10, startedAt: started)
                == .nothing)
    }
}
