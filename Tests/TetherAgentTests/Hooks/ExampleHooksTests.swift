import Foundation
import Testing
import TetherAgent
import TetherProtocol
import TetherStore
import TetherTestSupport

/// The repository's `hooks/` folder.
let hooksDir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("hooks").path

private func sqlite(_ file: String, _ sql: String) async throws -> String {
    let result = try await ChildProcess.run("/usr/bin/sqlite3", [file, sql])
    #expect(result.status == 0, "\(result)")
    return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
}

private func environment(_ dir: TemporaryDirectory, event: HookEvent, outcome: String?, extra: [String: String]) -> [String: String] {
    let record = ResetRecord(
        id: "0123456789abcdef", partition: PartitionName("store-17")!, error: SyncError(.divergingHistories, "partition restored from a \"backup\""), mode: .recoverUnsyncedChanges, strategy: .recover,
        backupPath: dir.appending("recovery/store-17/20261122T000000Z-0123456789abcdef.sqlite"), startedAt: 0)
    return HookInvocation.environment(for: event, record: record, storePath: dir.appending("store.sqlite"), serverURL: "ws://127.0.0.1:1/sync", outcome: outcome)
        .merging(extra) { $1 }
}

func runHook(_ name: String, _ dir: TemporaryDirectory, event: HookEvent, outcome: String? = nil, extra: [String: String] = [:]) async -> (HookResult, RecordingLog) {
    let log = RecordingLog()
    let invocation = HookInvocation(
        event: event, executable: hooksDir + "/" + name, environment: environment(dir, event: event, outcome: outcome, extra: extra),
        workingDirectory: dir.path, timeout: .seconds(30))
    return (await runRetryingBusyText(invocation, logger: log.logger), log)
}

@Test func beforeResetArchivesTheBackupWithAChecksum() async throws {
    let dir = try TemporaryDirectory(prefix: "tether-hooks")
    defer { dir.remove() }
    try FileManager.default.createDirectory(atPath: dir.appending("recovery/store-17"), withIntermediateDirectories: true)
    let backup = dir.appending("recovery/store-17/20261122T000000Z-0123456789abcdef.sqlite")
    _ = try await sqlite(backup, "CREATE TABLE orders(id TEXT PRIMARY KEY, total REAL); INSERT INTO orders VALUES ('a', 1.5);")
    let (result, log) = await runHook("before-reset", dir, event: .beforeReset, extra: ["TETHER_ARCHIVE_DIR": dir.appending("archive")])
    #expect(result == .succeeded, "\(log.all.map(\.message))")
    let archived = dir.appending("archive/store-17/20261122T000000Z-0123456789abcdef.sqlite")
    #expect(try await sqlite(archived, "SELECT total FROM orders WHERE id = 'a'") == "1.5")
    let check = try await ChildProcess.run("/bin/sh", ["-c", "cd \(dir.appending("archive/store-17")) && sha256sum --check *.sha256"])
    #expect(check.status == 0, "\(check)")
    #expect(log.lines().last?.hasPrefix("archived backup of store-17 for reset 0123456789abcdef") == true)
    // A re-run after a crash (same reset id) succeeds and leaves one archive.
    let (again, _) = await runHook("before-reset", dir, event: .beforeReset, extra: ["TETHER_ARCHIVE_DIR": dir.appending("archive")])
    #expect(again == .succeeded)
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.appending("archive/store-17")).count == 2)
}

@Test func beforeResetFailsOnACorruptOrMissingBackup() async throws {
    let dir = try TemporaryDirectory(prefix: "tether-hooks")
    defer { dir.remove() }
    let (missing, _) = await runHook("before-reset", dir, event: .beforeReset, extra: ["TETHER_ARCHIVE_DIR": dir.appending("archive")])
    #expect(missing == .failed(exitStatus: 1))
    try FileManager.default.createDirectory(atPath: dir.appending("recovery/store-17"), withIntermediateDirectories: true)
    try Data(repeating: 7, count: 8192).write(to: URL(fileURLWithPath: dir.appending("recovery/store-17/20261122T000000Z-0123456789abcdef.sqlite")))
    let (corrupt, log) = await runHook("before-reset", dir, event: .beforeReset, extra: ["TETHER_ARCHIVE_DIR": dir.appending("archive")])
    #expect(corrupt == .failed(exitStatus: 1))
    #expect(log.lines("stderr").contains { $0.contains("fails integrity_check") })
}

@Test func afterResetReportsTheOutcome() async throws {
    let dir = try TemporaryDirectory(prefix: "tether-hooks")
    defer { dir.remove() }
    _ = try await sqlite(dir.appending("store.sqlite"), "CREATE TABLE orders(id TEXT PRIMARY KEY); INSERT INTO orders VALUES ('a'),('b'); CREATE TABLE _tether_meta(k);CREATE TABLE grdb_migrations(identifier);")
    let report = dir.appending("reports/resets.jsonl")
    let (result, log) = await runHook("after-reset", dir, event: .afterReset, outcome: "recovered", extra: ["TETHER_REPORT_FILE": report])
    #expect(result == .succeeded, "\(log.all.map(\.message))")
    #expect(log.lines() == ["client reset 0123456789abcdef of store-17: recovered (mode recover_unsynced_changes, error 211); rows now: orders=2; backup kept at \(dir.appending("recovery/store-17/20261122T000000Z-0123456789abcdef.sqlite"))"])
    let line = try String(contentsOfFile: report, encoding: .utf8)
    let json = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    #expect(json?["outcome"] as? String == "recovered")
    #expect(json?["error_code"] as? Int == 211)
    #expect(json?["error_message"] as? String == "partition restored from a \"backup\"")
}

/// Issue 46: the message is the server's words; a newline in it must not end the record (and
/// start a forged one), nor may any other control character reach the file raw.
@Test func afterResetEscapesEveryControlCharacterOfTheMessage() async throws {
    let dir = try TemporaryDirectory(prefix: "tether-hooks")
    defer { dir.remove() }
    _ = try await sqlite(dir.appending("store.sqlite"), "CREATE TABLE orders(id TEXT PRIMARY KEY);")
    let report = dir.appending("reports/resets.jsonl")
    let message = "lost\n{\"time\":\"forged\",\"outcome\":\"recovered\"}\ttab \u{1B}[2J \"quoted\" back\\slash \r\u{8}\u{C}\u{1}\u{7F} Küche"
    let (result, log) = await runHook(
        "after-reset", dir, event: .afterReset, outcome: "recovered", extra: ["TETHER_REPORT_FILE": report, "TETHER_ERROR_MESSAGE": message])
    #expect(result == .succeeded, "\(log.all.map(\.message))")
    let text = try String(contentsOfFile: report, encoding: .utf8)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(lines.count == 2 && lines[1].isEmpty, "one record, one line: \(text.debugDescription)")
    #expect(!text.dropLast().unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "no raw control character: \(text.debugDescription)")
    let json = try JSONSerialization.jsonObject(with: Data(String(lines[0]).utf8)) as? [String: Any]
    #expect(json?["error_message"] as? String == message)
    #expect(json?["outcome"] as? String == "recovered")
    #expect(json?["error_code"] as? Int == 211)
}

@Test func manualResetWritesAnOperatorNotice() async throws {
    let dir = try TemporaryDirectory(prefix: "tether-hooks")
    defer { dir.remove() }
    let (result, log) = await runHook("manual-reset", dir, event: .manualReset, outcome: "manual", extra: ["TETHER_NOTICE_DIR": dir.appending("notices")])
    #expect(result == .succeeded)
    let notice = try String(contentsOfFile: dir.appending("notices/store-17.txt"), encoding: .utf8)
    #expect(notice.contains("tetherctl reset initiate store-17"))
    #expect(notice.contains("error 211"))
    #expect(log.lines().first?.contains("waits for an operator") == true)
}

@Test func recoverFromBackupReappliesTheBackupsUnsyncedChanges() async throws {
    let fixture = try await ResetFixture(mode: .manual, synced: [order("a", "alice", 1), order("b", "bob", 2)])
    try await fixture.appWrite("""
        INSERT INTO orders (id, customer, total, note) VALUES ('new', 'nina', 5, 'it''s new');
        UPDATE orders SET total = 11 WHERE id = 'a';
        DELETE FROM orders WHERE id = 'b';
        """)
    let backup = fixture.dir.appending("backup.sqlite")
    try await fixture.store.backup(to: backup)
    // The manual reset made the store the server's state; the unsynced changes are only in the backup.
    fixture.fetcher.serve([order("a", "alice", 1), order("b", "bob", 2), order("c", "carl", 3)])
    try await fixture.store.resetInPlace(
        to: ArrayStateSource([order("a", "alice", 1), order("b", "bob", 2), order("c", "carl", 3)]),
        serverVersion: ServerVersion(version: 30, salt: 3))
    let script = hooksDir + "/recover-from-backup"
    let dryRun = try await ChildProcess.run(script, [backup, fixture.store.path])
    #expect(dryRun.status == 0, "\(dryRun)")
    #expect(dryRun.standardOutput.split(separator: "\n").count == 3)
    #expect(try await sqlite(fixture.store.path, "SELECT count(*) FROM orders") == "3", "a dry run changes nothing")
    let applied = try await ChildProcess.run(script, [backup, fixture.store.path, "--apply"])
    #expect(applied.status == 0, "\(applied)")
    #expect(try await sqlite(fixture.store.path, "SELECT id, total, coalesce(note, '-') FROM orders ORDER BY id")
        == "a|11.0|-\nc|3.0|-\nnew|5.0|it's new")
    #expect(try await fixture.store.pendingChangeCount() == 3, "re-applied like an application write: captured for sync")
    let missing = try await ChildProcess.run(script, [fixture.dir.appending("nope.sqlite"), fixture.store.path])
    #expect(missing.status == 2)
}

/// A backup made by Tether 0.1 (its change log held the values; Tests/Fixtures/v1/store.sql, a
/// store with five unsynced changes made by that version) is read too.
@Test func recoverFromBackupReadsABackupOfThePreviousChangeLog() async throws {
    let dir = try TemporaryDirectory(prefix: "tether-hooks")
    defer { dir.remove() }
    let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/v1").path
    let backup = dir.appending("backup.sqlite")
    let load = try await ChildProcess.run("/usr/bin/sqlite3", ["-bail", backup, ".read \(fixtures)/store.sql"])
    #expect(load.status == 0, "\(load)")
    let schema = try #require(try PartitionStore.recordedSchema(path: backup))
    let store = try await PartitionStore.open(path: dir.appending("store.sqlite"), partition: PartitionName("shop")!, schema: schema)
    defer { try? store.close() }
    // The server's state the store was reset to: the four rows as they were synced.
    let row = { (id: String, customer: String, total: Double, note: FieldValue) in
        StateRow(table: "orders", key: .text(id), fields: ["customer": .text(customer), "total": .real(total), "note": note])
    }
    try await store.resetInPlace(
        to: ArrayStateSource([row("A", "ann", 1.5, .null), row("B", "bob", 2, .text("x")), row("C", "cy", 3.25, .null), row("E", "eva", 4, .text("it's"))]),
        serverVersion: ServerVersion(version: 2, salt: 2))
    let script = hooksDir + "/recover-from-backup"
    let dryRun = try await ChildProcess.run(script, [backup, store.path])
    #expect(dryRun.status == 0 && dryRun.standardError.contains("-- 5 changes"), "\(dryRun)")
    let applied = try await ChildProcess.run(script, [backup, store.path, "--apply"])
    #expect(applied.status == 0, "\(applied)")
    #expect(try await sqlite(store.path, "SELECT id, customer, total, coalesce(note, '-') FROM orders ORDER BY id")
        == "A|ann|9.5|-\nB|bob|2.5|again\nD|dan|5.0|new\nE|eva|4.0|it's")
}

@Test func onErrorSummarisesAndFlagsThePartition() async throws {
    let dir = try TemporaryDirectory(prefix: "tether-hooks")
    defer { dir.remove() }
    // The example writes its flags under /run/tether/errors; the copy under test writes in dir.
    let script = try String(contentsOfFile: hooksDir + "/on-error", encoding: .utf8)
        .replacingOccurrences(of: "flag_dir=/run/tether/errors", with: "flag_dir=\(dir.appending("errors"))")
    try script.write(toFile: dir.appending("on-error"), atomically: false, encoding: .utf8)
    chmod(dir.appending("on-error"), 0o755)
    func run(_ report: SyncErrorReport, repeats: Int) async -> (HookResult, RecordingLog) {
        let log = RecordingLog()
        let invocation = HookInvocation(
            event: .syncError, executable: dir.appending("on-error"),
            environment: HookInvocation.environment(forError: report, repeats: repeats, serverURL: "ws://127.0.0.1:1/sync"),
            workingDirectory: dir.path, timeout: .seconds(30))
        return (await runRetryingBusyText(invocation, logger: log.logger), log)
    }
    let revoked = SyncErrorReport(
        partition: "store-17", store: dir.appending("store.sqlite"), code: 206, name: "permission_denied", message: "access revoked",
        action: "delete_store", resetID: "0123456789abcdef")
    let (result, _) = await run(revoked, repeats: 2)
    #expect(result == .succeeded)
    let flag = try String(contentsOfFile: dir.appending("errors/store-17.flag"), encoding: .utf8)
    #expect(flag.hasSuffix(" delete_store 206 permission_denied 2\n"), "\(flag)")
    let refused = SyncErrorReport(partition: "", store: "", code: nil, name: "connection_refused", message: "refused", action: "transient")
    let (again, _) = await run(refused, repeats: 0)
    #expect(again == .succeeded)
    #expect(try String(contentsOfFile: dir.appending("errors/_connection.flag"), encoding: .utf8).hasSuffix(" transient none connection_refused 0\n"))
}
