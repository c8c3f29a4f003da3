import Foundation
import Synchronization
import Testing
import TetherAgent
import TetherProtocol
import TetherStore
import TetherTestSupport

private let synced = [order("a", "alice", 1), order("b", "bob", 2), order("c", "carol", 3), order("d", "dave", 4)]
/// The server after a restore and other devices' edits: a.total and d.customer changed, b deleted, e added.
private let server = [order("a", "alice", 10), order("c", "carol", 3), order("d", "DAVE", 4), order("e", "erin", 5)]
/// Offline edits covering the five rules of docs/contract.md "Recovery rules".
private let offlineEdits = """
    BEGIN;
    UPDATE orders SET total = 99 WHERE id = 'a';
    UPDATE orders SET note = 'gift' WHERE id = 'b';
    DELETE FROM orders WHERE id = 'c';
    UPDATE orders SET total = 40 WHERE id = 'd';
    INSERT INTO orders (id, customer, total) VALUES ('f', 'frank', 6);
    COMMIT;
    """

private func rows(_ path: String) async throws -> String {
    try await ChildProcess.run("/usr/bin/sqlite3", [path, "SELECT id, customer, total, coalesce(note, '-') FROM orders ORDER BY id"]).standardOutput
}

private let diverged = SyncError(.divergingHistories, "the partition was restored to an earlier point")

@Test func recoverReplaysUnsyncedChangesByTheFiveRules() async throws {
    let fixture = try await ResetFixture(synced: synced, hooks: [.beforeReset: 0, .afterReset: 0])
    try await fixture.appWrite(offlineEdits)
    fixture.fetcher.serve(server)
    let preReset = try await rows(fixture.store.path)

    let record = try await fixture.executor().begin(error: diverged, store: fixture.store, context: fixture.context)

    #expect(record.phase == .done)
    #expect(record.outcome == .recovered)
    #expect(try await rows(fixture.store.path) == "a|alice|99.0|-\nd|DAVE|40.0|-\ne|erin|5.0|-\nf|frank|6.0|-\n")
    #expect(record.recoveredChanges == 4, "a.total, delete c, d.total, insert f are kept and will be uploaded")
    #expect(record.droppedChanges == 1, "the update of b, deleted on the server, is dropped")
    #expect(try await fixture.store.pendingChangeCount() == 4)
    let metadata = try await fixture.store.metadata()
    #expect(metadata.clientResetMarker == record.id, "a reset cycle marker until the server acknowledges")
    #expect(metadata.clientFile == ClientFileIdentity(id: 101, salt: 7))
    #expect(metadata.serverVersion.version == 20)
    // The backup holds the store as it was, unsynced edits included.
    #expect(record.backupPath.hasPrefix(fixture.dir.appending("recovery/store-17/")))
    #expect(record.backupPath.hasSuffix("-\(record.id).sqlite"))
    #expect(try await rows(record.backupPath) == preReset)
    #expect(try PartitionStore.integrityCheck(ofFileAt: record.backupPath).isEmpty)
    #expect(try await fixture.store.integrityCheck().isEmpty)
    // Hooks: docs/contract.md "Reset hooks" environment, after-reset with the outcome.
    let env = try #require(fixture.hookEnvironment(.afterReset))
    #expect(env["TETHER_EVENT"] == "after-reset")
    #expect(env["TETHER_RESET_OUTCOME"] == "recovered")
    #expect(env["TETHER_RESET_ID"] == record.id)
    #expect(env["TETHER_BACKUP"] == record.backupPath)
    #expect(env["TETHER_ERROR_CODE"] == "211")
    #expect(fixture.hookEnvironment(.beforeReset)?["TETHER_EVENT"] == "before-reset")
    #expect(record.hooks.map(\.event) == [.beforeReset, .afterReset])
    // Persisted as shown by `tetherctl resets`.
    #expect(try fixture.stateDatabase.resets() == [record])
    #expect(!FileManager.default.fileExists(atPath: fixture.dir.appending("staging/store-17-\(record.id).sqlite")))
}

@Test func discardMakesTheStoreTheServersState() async throws {
    let fixture = try await ResetFixture(mode: .discardUnsyncedChanges, synced: synced)
    try await fixture.appWrite(offlineEdits)
    fixture.fetcher.serve(server)
    let record = try await fixture.executor().begin(error: diverged, store: fixture.store, context: fixture.context)
    #expect(record.outcome == .discarded)
    #expect(try await rows(fixture.store.path) == "a|alice|10.0|-\nc|carol|3.0|-\nd|DAVE|4.0|-\ne|erin|5.0|-\n")
    #expect(try await fixture.store.pendingChangeCount() == 0)
    #expect(try await fixture.store.metadata().clientResetMarker == nil)
    #expect(try await rows(record.backupPath).contains("f|frank|6.0|-"), "the discarded changes are in the backup")
}

@Test func recoveryDisabledOnTheServer() async throws {
    let noRecovery = SyncError(.divergingHistories, "restored", action: .clientResetNoRecovery)
    let recover = try await ResetFixture(synced: synced)
    fixtureServe(recover)
    let manual = try await recover.executor().begin(error: noRecovery, store: recover.store, context: recover.context)
    #expect(manual.phase == .manualPending)
    #expect(manual.fallbackReason == "client recovery is disabled on the server")

    let orDiscard = try await ResetFixture(mode: .recoverOrDiscardUnsyncedChanges, synced: synced)
    fixtureServe(orDiscard)
    let discarded = try await orDiscard.executor().begin(error: noRecovery, store: orDiscard.store, context: orDiscard.context)
    #expect(discarded.outcome == .discarded)
}

private func fixtureServe(_ fixture: ResetFixture) { fixture.fetcher.serve(server) }

@Test func manualResetKeepsTheStoreWritableAndBacksUpWhatWasWrittenMeanwhile() async throws {
    let withHook = try await ResetFixture(mode: .manual, synced: synced, hooks: [.manualReset: 0])
    withHook.fetcher.serve(server)
    let pending = try await withHook.executor().begin(error: diverged, store: withHook.store, context: withHook.context)
    #expect(pending.phase == .manualPending)
    #expect(pending.outcome == .manualPending)
    #expect(withHook.hookEnvironment(.manualReset)?["TETHER_RESET_OUTCOME"] == "manual")
    #expect(!FileManager.default.fileExists(atPath: pending.backupPath), "no backup until the reset is carried out")
    // Applications keep writing while the reset waits.
    try await withHook.appWrite("INSERT INTO orders (id, customer, total, note) VALUES ('late', 'lena', 7, 'written while pending')")
    let done = try await withHook.executor().drive(pending, store: withHook.store, context: withHook.context, initiate: true)
    #expect(done.outcome == .manualDone)
    #expect(done.backupPath == pending.backupPath)
    #expect(try await rows(done.backupPath).contains("late|lena|7.0|written while pending"))
    #expect(try await rows(withHook.store.path) == "a|alice|10.0|-\nc|carol|3.0|-\nd|DAVE|4.0|-\ne|erin|5.0|-\n")
}

@Test func permissionDeniedEmptiesTheStoreAfterABackupOnceInitiated() async throws {
    let fixture = try await ResetFixture(synced: synced)
    let denied = SyncError(.permissionDenied, "access to store-17 revoked")
    let pending = try await fixture.executor().begin(error: denied, store: fixture.store, context: fixture.context)
    #expect(pending.strategy == .deleteStore)
    #expect(pending.phase == .manualPending)
    let done = try await fixture.executor().drive(pending, store: fixture.store, context: fixture.context, initiate: true)
    #expect(done.outcome == .deleted)
    #expect(try await rows(fixture.store.path) == "")
    #expect(try await fixture.store.metadata().clientFile == nil, "the next bind is a new device")
    #expect(try await rows(done.backupPath).contains("a|alice|1.0|-"))
    #expect(fixture.fetcher.fetches == 0, "nothing is fetched from a server that denies access")
}

@Test func failingBeforeHookTurnsTheResetManualWithTheBackupKept() async throws {
    let fixture = try await ResetFixture(synced: synced, hooks: [.beforeReset: 3])
    fixture.fetcher.serve(server)
    let record = try await fixture.executor().begin(error: diverged, store: fixture.store, context: fixture.context)
    #expect(record.phase == .manualPending)
    #expect(record.fallbackReason == "before_hook failed (exit 3)")
    #expect(FileManager.default.fileExists(atPath: record.backupPath))
    #expect(try await rows(fixture.store.path).contains("a|alice|1.0|-"), "the store was not touched")
    #expect(fixture.log.all.contains { $0.metadata["message_id"] == TetherMessageID.hookFailed.rawValue })
    #expect(fixture.log.all.contains { $0.metadata["message_id"] == TetherMessageID.resetFellBackToManual.rawValue })
}

@Test func aResetBeforeTheLastOneWasAcknowledgedIsACycle() async throws {
    let fixture = try await ResetFixture(synced: synced)
    try await fixture.appWrite(offlineEdits)
    fixture.fetcher.serve(server)
    let first = try await fixture.executor().begin(error: diverged, store: fixture.store, context: fixture.context)
    #expect(first.outcome == .recovered)
    let second = try await fixture.executor().begin(error: diverged, store: fixture.store, context: fixture.context)
    #expect(second.phase == .manualPending)
    #expect(second.fallbackReason?.contains("reset cycle") == true)
    #expect(second.fallbackReason?.contains(first.id) == true)
}

@Test func aResetThatRecoveredNothingLeavesNoCycleMarker() async throws {
    let fixture = try await ResetFixture(synced: synced)
    fixture.fetcher.serve(server)
    let record = try await fixture.executor().begin(error: diverged, store: fixture.store, context: fixture.context)
    #expect(record.outcome == .recovered)
    #expect(record.recoveredChanges == 0)
    #expect(try await fixture.store.metadata().clientResetMarker == nil)
    let next = try await fixture.executor().begin(error: diverged, store: fixture.store, context: fixture.context)
    #expect(next.outcome == .recovered, "not mistaken for a cycle")
}

@Test func transientFailuresAreRetriedInTheSamePhase() async throws {
    let fixture = try await ResetFixture(synced: synced)
    fixture.fetcher.serve(server)
    fixture.fetcher.failNext(2)
    let record = try await fixture.executor().begin(error: diverged, store: fixture.store, context: fixture.context)
    #expect(record.outcome == .recovered)
    #expect(fixture.fetcher.fetches == 3)
}

/// Without a before-reset hook, step 4's download runs beside step 2's backup (the phase on
/// record is still backing-up when it starts) and is used as it is; with one, it waits for the hook.
@Test(arguments: [false, true])
func theDownloadOverlapsTheBackupUnlessABeforeHookRunsBetween(withHook: Bool) async throws {
    let fixture = try await ResetFixture(synced: synced, hooks: withHook ? [.beforeReset: 0] : [:])
    try await fixture.appWrite(offlineEdits)
    fixture.fetcher.serve(server)
    let database = fixture.stateDatabase
    let phases = Mutex<[ResetPhase]>([])
    fixture.fetcher.onFetch { if let phase = try? database.resets().last?.phase { phases.withLock { $0.append(phase) } } }
    let record = try await fixture.executor().begin(error: diverged, store: fixture.store, context: fixture.context)
    #expect(record.outcome == .recovered)
    #expect(fixture.fetcher.fetches == 1, "fetched once, whether early or not")
    #expect(phases.withLock { $0 } == [withHook ? .fetching : .backingUp])
    #expect(try await rows(fixture.store.path) == "a|alice|99.0|-\nd|DAVE|40.0|-\ne|erin|5.0|-\nf|frank|6.0|-\n")
    #expect(try await rows(record.backupPath).contains("f|frank|6.0|-"), "the backup is the store before the reset")
}

/// A crash after the rewrite committed but before the next phase was persisted: the restart
/// must not rewrite (or replay) again.
@Test func resumingAfterACommittedRewriteDoesNotReplayTwice() async throws {
    let fixture = try await ResetFixture(synced: synced)
    try await fixture.appWrite(offlineEdits)
    fixture.fetcher.serve(server)
    var record = try await fixture.executor().begin(error: diverged, store: fixture.store, context: fixture.context)
    let finalRows = try await rows(fixture.store.path)
    let pendingAfter = try await fixture.store.pendingChangeCount()
    // Rewind the record to "rewriting" with the staging copy present again, as after a crash.
    record.phase = .rewriting
    record.outcome = .inProgress
    record.hooks = []
    _ = try await fixture.fetcher.fetchState(of: ResetFixture.partition, into: fixture.dir.appending("staging/store-17-\(record.id).sqlite"))
    // The staged identity differs from the committed one, so to mimic the crash precisely the
    // store must carry the staged identity: adopt it.
    let staged = try #require(FetchedState.existing(at: fixture.dir.appending("staging/store-17-\(record.id).sqlite"), partition: ResetFixture.partition))
    try await fixture.store.setClientFile(staged.identity)
    let resumed = try await fixture.executor().drive(record, store: fixture.store, context: fixture.context)
    #expect(resumed.outcome == .recovered)
    #expect(try await rows(fixture.store.path) == finalRows)
    #expect(try await fixture.store.pendingChangeCount() == pendingAfter)
    #expect(resumed.recoveredChanges == pendingAfter)
}

@Test func resumingWithTheStagedStateLostFetchesAgain() async throws {
    let fixture = try await ResetFixture(synced: synced)
    fixture.fetcher.serve(server)
    var record = ResetRecord(
        id: "feedfacecafebeef", partition: ResetFixture.partition, error: SyncError(.divergingHistories, "x"),
        mode: .recoverUnsyncedChanges, strategy: .recover,
        backupPath: fixture.dir.appending("recovery/store-17/x-feedfacecafebeef.sqlite"), startedAt: 1)
    record.phase = .rewriting
    let done = try await fixture.executor().drive(record, store: fixture.store, context: fixture.context)
    #expect(done.outcome == .recovered)
    #expect(fixture.fetcher.fetches == 1)
    #expect(try await rows(fixture.store.path) == "a|alice|10.0|-\nc|carol|3.0|-\nd|DAVE|4.0|-\ne|erin|5.0|-\n")
}

@Test func oldBackupsGoOnceKeepBackupsNewerOnesExist() async throws {
    let fixture = try await ResetFixture(synced: synced, keepBackups: 2)
    fixture.fetcher.serve(server)
    var records: [ResetRecord] = []
    for _ in 0..<3 {
        records.append(try await fixture.executor().begin(error: diverged, store: fixture.store, context: fixture.context))
    }
    #expect(!FileManager.default.fileExists(atPath: records[0].backupPath))
    #expect(FileManager.default.fileExists(atPath: records[1].backupPath))
    #expect(FileManager.default.fileExists(atPath: records[2].backupPath))
    #expect(try fixture.stateDatabase.resets().map(\.backupRemoved) == [true, false, false])
}

/// A store an application altered gets a manual reset whatever the mode (docs/client-reset.md,
/// "Damaged and altered stores"): it waits for an operator, the manual hook runs, and when
/// initiated the store gets the server's schema and state back, unsynced changes in the backup.
@Test func anAlteredStoreGetsAManualResetWhateverTheMode() async throws {
    let fixture = try await ResetFixture(mode: .discardUnsyncedChanges, synced: synced, hooks: [.manualReset: 0])
    try await fixture.appWrite("INSERT INTO orders (id, customer, total) VALUES ('f', 'frank', 6)")
    fixture.fetcher.serve(server)
    let error = SyncError(.badClientFile, "an application altered the store's schema", action: .clientReset)
    let pending = try await fixture.executor().begin(
        error: error, store: fixture.store, context: fixture.context, manualBecause: "an application altered the store's schema (column orders.x)")
    #expect(pending.strategy == .manual)
    #expect(pending.outcome == .manualPending)
    #expect(pending.fallbackReason == "an application altered the store's schema (column orders.x)")
    #expect(fixture.hookEnvironment(.manualReset)?["TETHER_ERROR_CODE"] == "217")
    #expect(try await rows(fixture.store.path).contains("f|frank"), "untouched while it waits")
    let done = try await fixture.executor().drive(pending, store: fixture.store, context: fixture.context, initiate: true)
    #expect(done.outcome == .manualDone)
    #expect(try await rows(fixture.store.path) == "a|alice|10.0|-\nc|carol|3.0|-\nd|DAVE|4.0|-\ne|erin|5.0|-\n")
    #expect(try await rows(done.backupPath).contains("f|frank"), "the unsynced insert is in the backup")
}

/// Issue 22: a repeated reset of a store that has not changed since the previous reset
/// finished writes no new backup (a loop cannot fill the disk); its hooks get the previous
/// backup, which holds the store as it was before the series began.
@Test func aRepeatOfAnUnchangedStoreReusesTheBackup() async throws {
    let fixture = try await ResetFixture(mode: .discardUnsyncedChanges, synced: synced, hooks: [.beforeReset: 0])
    try await fixture.appWrite(offlineEdits)
    fixture.fetcher.serve(server)
    let first = try await fixture.executor().begin(error: diverged, store: fixture.store, context: fixture.context)
    #expect(first.resultServerVersion == 20)
    #expect(first.backupReusedFrom == nil)
    // The server refuses the store the reset gave it: the same error again.
    let second = try await fixture.executor().begin(error: diverged, store: fixture.store, context: fixture.context, repeats: 1)
    #expect(second.outcome == .discarded)
    #expect(second.loopRepeats == 1)
    #expect(second.backupReusedFrom == first.id)
    #expect(second.backupPath == first.backupPath)
    #expect(fixture.hookEnvironment(.beforeReset)?["TETHER_BACKUP"] == first.backupPath)
    let third = try await fixture.executor().begin(error: diverged, store: fixture.store, context: fixture.context, repeats: 2)
    #expect(third.backupReusedFrom == first.id, "a chain of repeats keeps pointing at the first backup")
    #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.dir.appending("recovery/store-17")).count == 1)
    // A store an application changed in between gets a backup of its own.
    try await fixture.appWrite("INSERT INTO orders (id, customer, total) VALUES ('g', 'gina', 7)")
    let fourth = try await fixture.executor().begin(error: diverged, store: fixture.store, context: fixture.context, repeats: 3)
    #expect(fourth.backupReusedFrom == nil)
    #expect(fourth.backupPath != first.backupPath)
    #expect(try await rows(fourth.backupPath).contains("g|gina"))
}

/// `keep_backups` holds as soon as a new backup is written, before the reset goes on (the
/// before hook counts the files), so a run of resets never holds more than that on disk.
@Test func keepBackupsHoldsWhileAResetRuns() async throws {
    let fixture = try await ResetFixture(mode: .discardUnsyncedChanges, synced: synced, keepBackups: 1)
    let hook = fixture.dir.appending("hooks/count")
    try "#!/bin/sh\nls \(fixture.dir.appending("recovery/store-17")) | wc -l >> \(fixture.dir.appending("counts"))\n"
        .write(toFile: hook, atomically: false, encoding: .utf8)
    chmod(hook, 0o755)
    var context = fixture.context
    context.partition.reset.beforeHook = hook
    fixture.fetcher.serve(server)
    for n in 0..<3 {
        try await fixture.appWrite("INSERT INTO orders (id, customer, total) VALUES ('n\(n)', 'x', \(n))")
        _ = try await fixture.executor().begin(error: diverged, store: fixture.store, context: context)
    }
    let counts = try String(contentsOfFile: fixture.dir.appending("counts"), encoding: .utf8)
        .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    #expect(counts == ["1", "1", "1"])
    #expect(try fixture.stateDatabase.resets().map(\.backupRemoved) == [true, true, false])
}

/// A staging copy left by a reset that never finished is removed when a later reset finishes.
@Test func strayStagingFilesGoWhenAResetFinishes() async throws {
    let fixture = try await ResetFixture(synced: synced)
    fixture.fetcher.serve(server)
    try FileManager.default.createDirectory(atPath: fixture.dir.appending("staging"), withIntermediateDirectories: true)
    let stray = fixture.dir.appending("staging/store-17-0123456789abcdef.sqlite")
    let otherPartition = fixture.dir.appending("staging/store-17-b-0123456789abcdef.sqlite")
    let bootstrap = fixture.dir.appending("staging/store-17-bootstrap.sqlite")
    // A ready file's part and note left by a reset cut in its download.
    let part = stray + ".ready", note = stray + ".ready.json"
    for path in [stray, otherPartition, bootstrap, part, note] { #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8))) }
    _ = try await fixture.executor().begin(error: diverged, store: fixture.store, context: fixture.context)
    for path in [stray, part, note] { #expect(!FileManager.default.fileExists(atPath: path), "\(path)") }
    #expect(FileManager.default.fileExists(atPath: otherPartition), "another partition's file is not this one's to remove")
    #expect(FileManager.default.fileExists(atPath: bootstrap))
}

@Test func retentionCountsASharedBackupOnce() {
    func done(_ id: String, _ path: String, at: Double) -> ResetRecord {
        var record = ResetRecord(
            id: id, partition: PartitionName("p")!, error: SyncError(.divergingHistories, "x"),
            mode: .recoverUnsyncedChanges, strategy: .recover, backupPath: path, startedAt: at)
        record.phase = .done
        return record
    }
    let records = [done("a", "/b/a", at: 1), done("b", "/b/b", at: 2), done("c", "/b/b", at: 3), done("d", "/b/b", at: 4)]
    #expect(BackupRetention.expired(records, keep: 1).map(\.id) == ["a"])
    #expect(BackupRetention.expired(records, keep: 2).isEmpty)
    #expect(BackupRetention.expired(records + [done("e", "/b/e", at: 5)], keep: 1).map(\.id).sorted() == ["a", "b", "c", "d"])
}
