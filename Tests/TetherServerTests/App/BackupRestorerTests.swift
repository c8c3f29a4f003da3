import Foundation
import Testing
import TetherProtocol
@testable import TetherServer

/// `restore-backup`: the copy is migrated and records what the previous database had past it.
@Suite struct BackupRestorerTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    func upload(_ seq: Int64, _ change: RowChange) -> UploadChangeset {
        UploadChangeset(firstSeq: seq, lastSeq: seq, changeset: Changeset([change]))
    }

    @Test(arguments: RestoreMode.allCases)
    func aRestoredBackupRecordsTheHistoryThePreviousDatabaseHadPastIt(_ mode: RestoreMode) async throws {
        let directory = NSTemporaryDirectory() + "tether-restore-backup-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }  // test cleanup
        let backup = directory + "-backup.sqlite"
        defer { try? FileManager.default.removeItem(atPath: backup) }  // test cleanup
        let kept = PartitionName("kept")!, grown = PartitionName("grown")!, born = PartitionName("born")!
        var salts: [Int64: Int64] = [:]
        do {
            let storage = try SQLiteServerStorage(directory: directory)
            let (a, _) = try await storage.registerClientFile(in: grown, now: now)
            let (k, _) = try await storage.registerClientFile(in: kept, now: now)
            _ = try await storage.integrate([upload(1, .insert("t", .integer(1), [:]))], from: a.id, into: grown, now: now)
            _ = try await storage.integrate([upload(1, .insert("t", .integer(1), [:]))], from: k.id, into: kept, now: now)
            try await storage.backup(to: backup)
            for seq in Int64(2)...3 {
                let outcome = try await storage.integrate([upload(seq, .insert("t", .integer(seq), [:]))], from: a.id, into: grown, now: now)
                salts[seq] = outcome.head.latest.salt
            }
            let (b, _) = try await storage.registerClientFile(in: born, now: now)
            _ = try await storage.integrate([upload(1, .insert("t", .integer(1), [:]))], from: b.id, into: born, now: now)
            try await storage.close()
        }
        let summary = try BackupRestorer.restore(from: backup, dataDirectory: directory, now: now, mode: mode)
        #expect(summary.previousDatabase != nil && summary.partitions == 2)
        #expect(summary.heals.map(\.partition) == ["born", "grown"])
        let storage = try SQLiteServerStorage(directory: directory)
        let record = try await storage.heal(of: grown)
        #expect(record == HealRecord(
            partition: "grown", mode: mode, origin: .backupRestore, restoredTo: 1, lostUntil: 3, healedTo: 1, devices: 0,
            healedChanges: 0, windowKnown: true, openedAt: now, closedAt: mode == .rollback ? now : nil))
        #expect(try await storage.heal(of: kept) == nil)
        #expect(try await storage.heal(of: born)?.restoredTo == 0)
        #expect(try await storage.head(of: born)?.latest.version == 0)
        if mode == .heal {
            let offer = HealChunk.offer(session: 1, contribution: 1, view: ServerVersion(version: 3, salt: salts[3]!), base: 1)
            #expect(try await storage.contributeHeal(offer, into: grown, now: now, epoch: 0).outcome == .accepted)
        }
        try await storage.close()
    }
}
