import Foundation
import Testing
import TetherProtocol
@testable import TetherServer

/// Healing from the fleet, the same in both storages: the record a restore writes, a
/// contribution's chunks, closing, compaction kept off an open heal, fencing.
extension StorageConformanceTests {
    /// Uploads rows 1...3 (one version each) with a snapshot after version 1; returns it.
    func lostWindow(_ storage: any ServerStorage) async throws -> (ClientFileIdentity, SnapshotRecord, salts: [Int64: Int64]) {
        let (a, _) = try await storage.registerClientFile(in: partition, now: now)
        var snapshot: SnapshotRecord? = nil
        var salts: [Int64: Int64] = [:]
        for seq in Int64(1)...3 {
            let outcome = try await storage.integrate(
                [upload(seq, seq, .insert("t", .integer(seq), ["v": .integer(seq)]))], from: a.id, into: partition, now: now)
            salts[seq] = outcome.head.latest.salt
            if seq == 1 { snapshot = try await storage.snapshot(of: partition, now: now) }
        }
        return (a, snapshot!, salts)
    }

    func chunk(_ view: Int64, salt: Int64, base: Int64, final: Bool = true, rows: [RowChange] = [], unknown: [RowChange] = []) -> HealChunk {
        HealChunk(
            session: 1, contribution: 77, view: ServerVersion(version: view, salt: salt), base: base, isFinal: final,
            unknown: ChangeRows(Changeset(unknown)), rows: ChangeRows(Changeset(rows)))
    }

    /// A snapshot taken before an earlier restore went back past it is of another line of
    /// history than the devices hold: a restore to it, asked to heal, is recorded as a rollback.
    @Test(arguments: StorageBackend.allCases)
    func aRestoreToASnapshotOffTheCurrentLineIsARollback(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, first, _) = try await lostWindow(storage)
            let later = try await storage.snapshot(of: partition, now: now)  // version 3
            _ = try await storage.restore(partition, to: first.id, mode: .rollback, now: now)  // back to 1
            for seq in Int64(2)...5 {
                _ = try await storage.integrate(
                    [upload(seq, seq, .insert("t", .integer(seq), ["v": .integer(seq)]))], from: a.id, into: partition, now: now)
            }
            // Head 5 on the new line; the snapshot at 3 is of the old one.
            let (_, record) = try await storage.restore(partition, to: later.id, mode: .heal, now: now)
            #expect(record?.mode == .rollback && record?.isHealing == false, "\(String(describing: record))")
        }
    }

    /// Every restore's lost versions stay known after a later restore replaces its record, and
    /// after a heal is closed (``HealDetection``: a device away through both is a leftover).
    @Test(arguments: StorageBackend.allCases)
    func theVersionsEveryRestoreLostStayKnown(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, first, salts) = try await lostWindow(storage)
            _ = try await storage.restore(partition, to: first.id, mode: .rollback, now: now)  // 2 and 3 lost
            var newSalts: [Int64: Int64] = [:]
            for seq in Int64(2)...4 {  // the client file's seqs after 1 were lost with the history
                let outcome = try await storage.integrate(
                    [upload(seq, seq, .insert("t", .integer(seq), ["v": .integer(seq)]))], from: a.id, into: partition, now: now)
                newSalts[outcome.head.latest.version] = outcome.head.latest.salt
            }
            _ = try await storage.restore(partition, to: first.id, mode: .heal, now: now)  // the new line's 2...4 lost
            #expect(try await storage.lostSalt(of: partition, version: 3) == newSalts[3], "the record holds the second restore's window")
            for version in Int64(2)...3 {
                #expect(try await storage.lostByARestore(of: partition, version: version, salt: salts[version]!), "first restore, \(version)")
                #expect(try await storage.lostByARestore(of: partition, version: version, salt: newSalts[version]!), "second restore, \(version)")
                #expect(try await !storage.lostByARestore(of: partition, version: version, salt: salts[version]! &+ 1))
            }
            _ = try await storage.closeHeal(partition, now: now)
            #expect(try await storage.lostByARestore(of: partition, version: 3, salt: salts[3]!))
            #expect(try await storage.lostByARestore(of: partition, version: 4, salt: newSalts[4]!))
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aRestoreRecordsTheLostWindowAndDevicesGiveItBack(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (_, snapshot, salts) = try await lostWindow(storage)
            let (head, record) = try await storage.restore(partition, to: snapshot.id, mode: .heal, now: now)
            #expect(head.latest.version == 1)
            let expected = HealRecord(
                partition: partition.rawValue, mode: .heal, origin: .snapshotRestore, restoredTo: 1, lostUntil: 3, healedTo: 1, devices: 0,
                healedChanges: 0, windowKnown: true, openedAt: now, closedAt: nil)
            #expect(record == expected)
            #expect(try await storage.heal(of: partition) == expected)
            #expect(try await storage.heals() == [expected])
            // The lost versions' salts, which tell a restore's leftovers from the line written since.
            #expect(try await storage.lostSalt(of: partition, version: 3) == salts[3])
            #expect(try await storage.lostSalt(of: partition, version: 1) == nil)
            let epoch = try await storage.epoch(of: partition)

            // A view from another lineage is not wanted; the offer of one from the window is.
            let stranger = try await storage.contributeHeal(chunk(3, salt: salts[3]! &+ 1, base: 1, final: false), into: partition, now: now, epoch: epoch)
            #expect(stranger.outcome == .notWanted)
            let offer = HealChunk.offer(session: 1, contribution: 77, view: ServerVersion(version: 3, salt: salts[3]!), base: 1)
            #expect(try await storage.contributeHeal(offer, into: partition, now: now, epoch: epoch).outcome == .accepted)
            let last = chunk(3, salt: salts[3]!, base: 1, rows: [
                .insert("t", .integer(2), ["v": .integer(2)]), .insert("t", .integer(3), ["v": .integer(3)]),
            ])
            let reply = try await storage.contributeHeal(last, into: partition, now: now, epoch: epoch)
            #expect(reply.outcome == .completed && reply.healedChanges == 2)
            #expect(try await state(storage).count == 3)
            // One history entry of origin 0 carries the healed rows to every device.
            let history = try await storage.history(of: partition, after: 1, maxEntries: 10, maxBytes: 1 << 20)
            #expect(history.map(\.originFile) == [0] && history.map(\.originSeq) == [0])
            #expect(try await storage.historyProblems(of: partition).isEmpty)
            // A re-send answers the same; the record counts the device once.
            #expect(try await storage.contributeHeal(last, into: partition, now: now, epoch: epoch) == reply)
            let healed = try await storage.heal(of: partition)
            #expect(healed?.healedTo == 3 && healed?.devices == 1 && healed?.healedChanges == 2)

            // Closed: later views are not wanted, and closing twice is refused.
            let closed = try await storage.closeHeal(partition, now: now.addingTimeInterval(5))
            #expect(closed.closedAt == now.addingTimeInterval(5) && !closed.isHealing)
            await #expect(throws: StorageError.self) { try await storage.closeHeal(partition, now: now) }
            var other = offer
            other.contribution = 78
            #expect(try await storage.contributeHeal(other, into: partition, now: now, epoch: epoch).outcome == .notWanted)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aRollbackIsRecordedClosedAndARestoreThatLosesNothingRecordsNothing(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (_, snapshot, salts) = try await lostWindow(storage)
            let (_, record) = try await storage.restore(partition, to: snapshot.id, mode: .rollback, now: now)
            #expect(record?.mode == .rollback && record?.closedAt == now && record?.lostUntil == 3)
            let offer = HealChunk.offer(session: 1, contribution: 1, view: ServerVersion(version: 2, salt: salts[2]!), base: 1)
            let reply = try await storage.contributeHeal(offer, into: partition, now: now, epoch: try await storage.epoch(of: partition))
            #expect(reply.outcome == .notWanted)
            let (_, none) = try await storage.restore(partition, to: snapshot.id, mode: .heal, now: now)
            #expect(none == nil)
            #expect(try await storage.heal(of: partition)?.mode == .rollback)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func compactionLeavesAPartitionWithAnOpenHealAlone(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, snapshot, _) = try await lostWindow(storage)
            _ = try await storage.restore(partition, to: snapshot.id, mode: .heal, now: now)
            _ = try await storage.integrate([upload(2, 2, .insert("t", .integer(9), [:]))], from: a.id, into: partition, now: now)
            #expect(try await storage.compact(olderThan: now.addingTimeInterval(10)).partitions.isEmpty)
            _ = try await storage.closeHeal(partition, now: now)
            #expect(try await storage.compact(olderThan: now.addingTimeInterval(10)).partitions == [partition.rawValue: 2])
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aWindowTheServerDidNotKnowGrowsWithTheViewsDevicesReport(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (_, _, salts) = try await lostWindow(storage)
            let opened = try await storage.openHeal(
                partition, window: LostWindow(restoredTo: 1, lostUntil: 2, salts: [:]), mode: .heal, origin: .devicesAhead, now: now)
            #expect(opened.isHealing && !opened.windowKnown && opened.origin == .devicesAhead)
            try await storage.noteLostVersion(4, of: partition)
            #expect(try await storage.heal(of: partition)?.lostUntil == 4)
            let offer = HealChunk.offer(session: 1, contribution: 5, view: ServerVersion(version: 6, salt: salts[3]!), base: 3)
            let epoch = try await storage.epoch(of: partition)
            #expect(try await storage.contributeHeal(offer, into: partition, now: now, epoch: epoch).outcome == .accepted)
            #expect(try await storage.heal(of: partition)?.lostUntil == 6)
            if backend == .postgresql {
                await #expect(throws: StorageError.self) {
                    _ = try await storage.contributeHeal(offer, into: partition, now: now, epoch: epoch + 1)
                }
            }
        }
    }

    /// A device that reset onto the history written since the restore and resets again while
    /// the heal is open offers a view of that history: not wanted, whether the server knows
    /// the window (a snapshot restore) or not (a database put back), and nothing is written.
    @Test(arguments: StorageBackend.allCases)
    func aViewOfTheHistorySinceTheRestoreIsNotWanted(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, snapshot, _) = try await lostWindow(storage)
            _ = try await storage.restore(partition, to: snapshot.id, mode: .heal, now: now)
            var since: [Int64: Int64] = [:]
            for seq in Int64(2)...3 {
                let outcome = try await storage.integrate(
                    [upload(seq, seq, .insert("t", .integer(10 + seq), ["v": .integer(seq)]))], from: a.id, into: partition, now: now)
                since[outcome.head.latest.version] = outcome.head.latest.salt
            }
            let epoch = try await storage.epoch(of: partition)
            let before = try await state(storage)
            // The view at 2 lacks row 13, written at 3: applied, it would delete it.
            let stale = chunk(2, salt: since[2]!, base: 3, rows: [.delete("t", .integer(13))])
            let reply = try await storage.contributeHeal(stale, into: partition, now: now, epoch: epoch)
            // Covered, not "not wanted": the heal is open, so the device keeps its changes of rows
            // the server lacks.
            #expect(reply.outcome == .covered && reply.reason.contains("since the restore"), "\(reply)")
            #expect(try await state(storage) == before)

            // The same when the server learned of the window from devices ahead of it.
            _ = try await storage.closeHeal(partition, now: now)
            _ = try await storage.openHeal(
                partition, window: LostWindow(restoredTo: 1, lostUntil: 5, salts: [:]), mode: .heal, origin: .devicesAhead, now: now)
            var again = stale
            again.contribution = 78
            #expect(try await storage.contributeHeal(again, into: partition, now: now, epoch: epoch).outcome == .covered)
            #expect(try await state(storage) == before)
            #expect(try await storage.heal(of: partition)?.healedChanges == 0)
        }
    }

    /// A row a device did not vouch for (unknown) is left to other views; a row the view saw
    /// deleted goes, unless a write since the restore put it back.
    @Test(arguments: StorageBackend.allCases)
    func unknownRowsAreLeftAndPostRestoreWritesComeLast(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let (a, snapshot, salts) = try await lostWindow(storage)
            _ = try await storage.restore(partition, to: snapshot.id, mode: .heal, now: now)
            // Since the restore: row 1 updated, row 5 inserted.
            let outcome = try await storage.integrate(
                [upload(2, 2, .update("t", .integer(1), ["w": .integer(1)]), .insert("t", .integer(5), ["v": .integer(5)]))],
                from: a.id, into: partition, now: now)
            let rows: [RowChange] = [
                .insert("t", .integer(1), ["v": .integer(10)]), .insert("t", .integer(2), ["v": .integer(2)]),
                .delete("t", .integer(5)), .insert("t", .integer(3), ["v": .integer(3)]),
            ]
            let reply = try await storage.contributeHeal(
                chunk(3, salt: salts[3]!, base: outcome.head.latest.version, rows: rows, unknown: [.delete("t", .integer(3))]),
                into: partition, now: now, epoch: try await storage.epoch(of: partition))
            #expect(reply.outcome == .completed && reply.healedChanges == 2)
            // Row 1: the view's value with the later update; row 5: the view had no row 5, but
            // it was inserted after the restore (re-inserted: it stays); row 3 unknown.
            #expect(try await state(storage) == [
                "t/integer(1)": ["v": .integer(10), "w": .integer(1)], "t/integer(2)": ["v": .integer(2)],
                "t/integer(5)": ["v": .integer(5)],
            ])
        }
    }
}
