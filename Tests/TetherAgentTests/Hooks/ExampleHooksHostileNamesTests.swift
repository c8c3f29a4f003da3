import Foundation
import Testing
import TetherAgent
import TetherProtocol
import TetherTestSupport

/// The example hooks treat what a store holds, and what the server says, as hostile: table and
/// column names crafted by an application never make a script run anything (here: the sqlite3
/// shell's `writefile()`, which a name smuggled into SQL would call), and server messages
/// cannot add journal entries or terminal escapes (issue "Security hardening", item 1).
@Suite struct ExampleHooksHostileNamesTests {
    static func run(_ sql: String, on file: String) async throws {
        let result = try await ChildProcess.run("/usr/bin/sqlite3", [file, sql])
        #expect(result.status == 0, "\(result)")
    }

    /// A name that, pasted into SQL between double quotes, calls `writefile(marker)`.
    static func hostile(_ marker: String) -> String { "x\"||writefile('\(marker)','pwned')||\"" }

    @Test func afterResetRefusesTableNamesThatAreNotIdentifiers() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-hostile")
        defer { dir.remove() }
        let marker = dir.appending("pwned")
        let store = dir.appending("store.sqlite")
        let name = "t\"WHERE(writefile('\(marker)','pwned'))--"
        try await Self.run("""
            CREATE TABLE t(id TEXT PRIMARY KEY); INSERT INTO t VALUES ('a');
            CREATE TABLE "\(name.replacingOccurrences(of: "\"", with: "\"\""))"(id);
            CREATE TABLE "line
            .shell touch \(marker)"(id);
            """, on: store)
        let (result, log) = await runHook(
            "after-reset", dir, event: .afterReset, outcome: "recovered", extra: ["TETHER_REPORT_FILE": dir.appending("report.jsonl")])
        #expect(result == .failed(exitStatus: 1))
        #expect(log.lines("stderr").contains { $0.contains("refused 2 table name(s)") }, "\(log.all.map(\.message))")
        #expect(log.lines().first?.contains("rows now: t=1;") == true, "the plain table is still counted")
        #expect(!FileManager.default.fileExists(atPath: marker), "a table name ran code")
    }

    @Test func recoverFromBackupRefusesColumnNamesThatAreNotIdentifiers() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-hostile")
        defer { dir.remove() }
        let marker = dir.appending("pwned")
        let column = Self.hostile(marker).replacingOccurrences(of: "\"", with: "\"\"")
        let (backup, store) = (dir.appending("backup.sqlite"), dir.appending("store.sqlite"))
        let table = "CREATE TABLE orders(id TEXT PRIMARY KEY, \"\(column)\" TEXT);"
        try await Self.run(table + """
            CREATE TABLE _tether_log(seq INTEGER PRIMARY KEY, tbl TEXT, pk, kind TEXT, cols TEXT);
            INSERT INTO orders VALUES ('a', 'v'); INSERT INTO _tether_log VALUES (1, 'orders', 'a', 'insert', NULL);
            """, on: backup)
        try await Self.run(table, on: store)
        let script = hooksDir + "/recover-from-backup"
        for arguments in [[backup, store], [backup, store, "--apply"]] {
            let result = try await ChildProcess.run(script, arguments)
            #expect(result.status == 2, "\(result)")
            #expect(result.standardError.contains("not plain identifiers"), "\(result)")
        }
        #expect(!FileManager.default.fileExists(atPath: marker), "a column name ran code")
        // A table name in the change log, and a store whose own table names are hostile.
        try await Self.run("INSERT INTO _tether_log VALUES (2, '\(Self.hostile(marker).replacingOccurrences(of: "'", with: "''"))', 'a', 'delete', NULL)", on: backup)
        #expect(try await ChildProcess.run(script, [backup, store]).status == 2)
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    /// Values are data: a value that looks like a dot-command is written as it is, never run.
    @Test func recoverFromBackupWritesHostileValuesAsData() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-hostile")
        defer { dir.remove() }
        let marker = dir.appending("pwned")
        let (backup, store) = (dir.appending("backup.sqlite"), dir.appending("store.sqlite"))
        let value = "v\n.shell touch \(marker)\n'); SELECT writefile('\(marker)','x'); --"
        try await Self.run("""
            CREATE TABLE orders(id TEXT PRIMARY KEY, note TEXT);
            CREATE TABLE _tether_log(seq INTEGER PRIMARY KEY, tbl TEXT, pk, kind TEXT, cols TEXT);
            INSERT INTO orders VALUES ('a', '\(value.replacingOccurrences(of: "'", with: "''"))');
            INSERT INTO _tether_log VALUES (1, 'orders', 'a', 'insert', NULL);
            """, on: backup)
        try await Self.run("CREATE TABLE orders(id TEXT PRIMARY KEY, note TEXT);", on: store)
        let applied = try await ChildProcess.run(hooksDir + "/recover-from-backup", [backup, store, "--apply"])
        #expect(applied.status == 0, "\(applied)")
        #expect(!FileManager.default.fileExists(atPath: marker), "a value ran code")
        let note = try await ChildProcess.run("/usr/bin/sqlite3", [store, "SELECT note = '\(value.replacingOccurrences(of: "'", with: "''"))' FROM orders"])
        #expect(note.standardOutput == "1\n")
    }

    /// before-reset reads no names; a backup full of hostile ones is archived like any other.
    @Test func beforeResetIsNotMovedByHostileNames() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-hostile")
        defer { dir.remove() }
        let marker = dir.appending("pwned")
        try FileManager.default.createDirectory(atPath: dir.appending("recovery/store-17"), withIntermediateDirectories: true)
        let backup = dir.appending("recovery/store-17/20261122T000000Z-0123456789abcdef.sqlite")
        try await Self.run("CREATE TABLE \"\(Self.hostile(marker).replacingOccurrences(of: "\"", with: "\"\""))\"(id);", on: backup)
        let (result, _) = await runHook("before-reset", dir, event: .beforeReset, extra: ["TETHER_ARCHIVE_DIR": dir.appending("archive")])
        #expect(result == .succeeded)
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    /// Server-chosen messages lose their control characters: one journal entry, no escapes.
    @Test func onErrorAndManualResetStripControlCharacters() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-hostile")
        defer { dir.remove() }
        // A systemd-cat that records what it is given (the hook finds it first on PATH).
        try FileManager.default.createDirectory(atPath: dir.appending("bin"), withIntermediateDirectories: true)
        try Cluster.write("#!/bin/sh\ncat >> \(dir.appending("journal"))\n", to: dir.appending("bin/systemd-cat"), mode: 0o755)
        let script = try String(contentsOfFile: hooksDir + "/on-error", encoding: .utf8)
            .replacingOccurrences(of: "flag_dir=/run/tether/errors", with: "flag_dir=\(dir.appending("errors"))")
        try script.write(toFile: dir.appending("on-error"), atomically: false, encoding: .utf8)
        chmod(dir.appending("on-error"), 0o755)
        let message = "refused\n<0>forged critical entry\u{1b}[2J\tend"
        let report = SyncErrorReport(partition: "store-17", store: "", code: 201, name: "other_session_error", message: message, action: "retry")
        var environment = HookInvocation.environment(forError: report, repeats: 0, serverURL: "ws://127.0.0.1:1/sync")
        environment["PATH"] = dir.appending("bin") + ":" + HookInvocation.path
        let invocation = HookInvocation(
            event: .syncError, executable: dir.appending("on-error"), environment: environment, workingDirectory: dir.path, timeout: .seconds(30))
        #expect(await runRetryingBusyText(invocation, logger: RecordingLog().logger) == .succeeded)
        let journal = try String(contentsOfFile: dir.appending("journal"), encoding: .utf8)
        #expect(journal.split(separator: "\n").count == 1, "\(journal.debugDescription)")
        #expect(!journal.dropLast().contains { $0.asciiValue.map { $0 < 0x20 || $0 == 0x7f } ?? false })
        #expect(journal.contains("refused <0>forged critical entry [2J end"))

        let (result, _) = await runHook(
            "manual-reset", dir, event: .manualReset, outcome: "manual",
            extra: ["TETHER_NOTICE_DIR": dir.appending("notices"), "TETHER_ERROR_MESSAGE": message])
        #expect(result == .succeeded)
        let notice = try String(contentsOfFile: dir.appending("notices/store-17.txt"), encoding: .utf8)
        #expect(!notice.contains("\u{1b}") && notice.contains("refused <0>forged critical entry"))
    }
}
