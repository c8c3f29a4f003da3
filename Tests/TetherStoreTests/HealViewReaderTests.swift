import Foundation
import GRDB
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport

/// A device's view for healing (``HealViewReader``): random synced states, unsynced edits and
/// held values in the backup, random fetched states in staging, random chunk bounds. Applying
/// the chunks' rows to the staged state (an insert is the whole row, a delete removes) must give
/// the backup's rows, except for the unknown keys, which keep the staged value.
@Suite struct HealViewReaderTests {
    typealias Rows = [String: [RowKey: [String: FieldValue]]]

    /// Every user row of a store file, by table and key.
    static func rows(of path: String, schema: Schema = testSchema) throws -> Rows {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            var rows: Rows = [:]
            for table in schema.tables {
                var byKey: [RowKey: [String: FieldValue]] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \"\(table.name)\"") {
                    let key: RowKey = switch (row[table.primaryKey] as DatabaseValue).storage {
                    case .int64(let v): .integer(v)
                    case .string(let v): .text(v)
                    default: .text("?")
                    }
                    var fields: [String: FieldValue] = [:]
                    for column in table.valueColumns { fields[column.name] = value(row[column.name]) }
                    byKey[key] = fields
                }
                rows[table.name] = byKey
            }
            return rows
        }
    }

    static func value(_ value: DatabaseValue) -> FieldValue {
        switch value.storage {
        case .null: .null
        case .int64(let v): .integer(v)
        case .double(let v): .real(v)
        case .string(let v): .text(v)
        case .blob(let v): .blob([UInt8](v))
        }
    }

    static func randomOrder(_ random: inout SeededRandom) -> [String: FieldValue] {
        order(
            customer: ["ann", "bob", "cy"].randomElement(using: &random)!, total: Double(Int.random(in: 0...3, using: &random)) / 2,
            qty: Int64.random(in: 0...2, using: &random), paid: Bool.random(using: &random),
            note: Bool.random(using: &random) ? nil : ["x", "y"].randomElement(using: &random),
            photo: Int.random(in: 0...3, using: &random) == 0 ? [1, 2] : nil)
    }

    static func randomItem(_ random: inout SeededRandom) -> [String: FieldValue] {
        ["name": .text(["pen", "ink"].randomElement(using: &random)!), "price": Bool.random(using: &random) ? .null : .real(1.5)]
    }

    /// A random full state over a small key space (so that the view and staging overlap).
    static func randomState(_ random: inout SeededRandom) -> [StateRow] {
        var rows: [StateRow] = []
        for i in 0..<40 where Bool.random(using: &random) { rows.append(StateRow(table: "items", key: .integer(Int64(i)), fields: randomItem(&random))) }
        for i in 0..<40 where Bool.random(using: &random) {
            rows.append(StateRow(table: "orders", key: .text("k\(i)"), fields: randomOrder(&random)))
        }
        return rows
    }

    struct Setup {
        var backup: String
        var staging: String
        /// Keys the test edited without syncing, or whose values it had held.
        var edited: Set<String>
    }

    /// A store synced to version 10 with a random state, random unsynced edits, then synced to
    /// version 11 (a server delete of a row with a pending update: held values), backed up; a
    /// staging store with another random state at version 20.
    static func setUp(_ dir: TemporaryDirectory, seed: UInt64) async throws -> Setup {
        var random = SeededRandom(seed: seed)
        let store = try await makeStore(dir)
        try await store.resetInPlace(
            to: ArrayStateSource(randomState(&random)), serverVersion: ServerVersion(version: 10, salt: 3),
            clientFile: ClientFileIdentity(id: 1, salt: 1))
        // Edits as (statement, argument, the key it names, whether it counts when it changes nothing).
        var edits: [(sql: String, argument: DatabaseValue, name: String, always: Bool)] = []
        for _ in 0..<Int.random(in: 0...12, using: &random) {
            let i = Int.random(in: 0..<45, using: &random)
            switch Int.random(in: 0...2, using: &random) {
            case 0:
                edits.append(("INSERT OR REPLACE INTO orders (id, customer, total, qty, paid) VALUES (?, 'new', 9, 9, 1)", "k\(i)".databaseValue, "orders/k\(i)", true))
            case 1:
                edits.append(("UPDATE items SET name = 'edited' WHERE sku = ?", i.databaseValue, "items/\(i)", false))
            default:
                edits.append(("DELETE FROM orders WHERE id = ?", "k\(i)".databaseValue, "orders/k\(i)", false))
            }
        }
        let planned = edits
        let app = try appConnection(store.path)
        let edited = try await app.write { db in
            var edited: Set<String> = []
            for edit in planned {
                try db.execute(sql: edit.sql, arguments: [edit.argument])
                if edit.always || db.changesCount > 0 { edited.insert(edit.name) }
            }
            return edited
        }
        // The server deletes a row with a pending update: the update's values are held.
        // The store then syncs to version 11.
        let pendingItems = edited.filter { $0.hasPrefix("items/") }.compactMap { Int64($0.dropFirst(6)) }.sorted()
        try await store.apply([
            DownloadEntry(
                serverVersion: ServerVersion(version: 11, salt: 5), integratedClientSeq: 0,
                changeset: Changeset(pendingItems.prefix(1).map { RowChange(table: "items", key: .integer($0), kind: .delete) }))
        ])
        try app.close()
        let (backup, staging) = try await backUpAndStage(
            store, in: dir, state: randomState(&random), at: ServerVersion(version: 20, salt: 4))
        return Setup(backup: backup, staging: staging, edited: edited)
    }

    /// Backs `store` up as a reset does (then closes it), and writes a staging store holding
    /// `state` at `version`, as the reset's fetch does.
    static func backUpAndStage(
        _ store: PartitionStore, in dir: TemporaryDirectory, state: [StateRow], at version: ServerVersion
    ) async throws -> (backup: String, staging: String) {
        let backup = dir.appending("backup.sqlite")
        try await store.backup(to: backup)
        try store.close()
        let staging = try await makeStore(dir, name: "staging.sqlite")
        try await staging.resetInPlace(to: ArrayStateSource(state), serverVersion: version, clientFile: ClientFileIdentity(id: 2, salt: 2))
        try staging.close()
        return (backup, dir.appending("staging.sqlite"))
    }

    static func name(_ table: String, _ key: RowKey) -> String {
        switch key {
        case .integer(let v): "\(table)/\(v)"
        case .text(let v): "\(table)/\(v)"
        }
    }

    @Test(arguments: 0..<24)
    func theChunksTurnTheStagedStateIntoTheViewExceptUnknownKeys(seed: Int) async throws {
        let dir = try TemporaryDirectory(prefix: "tether-heal")
        defer { dir.remove() }
        let setup = try await Self.setUp(dir, seed: UInt64(seed) &+ 0x5eed)
        var random = SeededRandom(seed: UInt64(seed))
        let maxChanges = [1, 3, 7, 50, 2000].randomElement(using: &random)!
        let maxBytes = [64, 300, 4096, 512 << 10].randomElement(using: &random)!
        // Odd seeds read a recovering reset's view: rows it only updated are part of it.
        let recovering = seed % 2 == 1
        let reader = try HealViewReader(
            backup: setup.backup, staging: setup.staging, recovering: recovering, maxChanges: maxChanges, maxBytes: maxBytes)
        #expect(reader.view == ServerVersion(version: 11, salt: 5))
        #expect(reader.schemasMatch)

        let view = try Self.rows(of: setup.backup)
        let staged = try Self.rows(of: setup.staging)
        var result = staged
        var unknown: Set<String> = []
        var written: Set<String> = []
        var chunks = 0
        for try await chunk in reader.chunks() {
            chunks += 1
            #expect(chunk.count > 0 && chunk.count <= maxChanges)
            // Bytes: the change that reaches the bound is the last (a row here is < 200 bytes).
            #expect(chunk.unknown.byteCount + chunk.rows.byteCount < maxBytes + 200)
            for change in chunk.unknown.changeset.changes {
                #expect(change.kind == .delete)
                #expect(unknown.insert(Self.name(change.table, change.key)).inserted, "each unknown key once")
            }
            for change in chunk.rows.changeset.changes {
                let name = Self.name(change.table, change.key)
                #expect(written.insert(name).inserted, "each row once")
                switch change.kind {
                case .insert:
                    let table = try #require(testSchema.table(change.table))
                    #expect(Set(change.fields.keys) == Set(table.valueColumns.map(\.name)), "every column, nulls included")
                    #expect(staged[change.table]?[change.key] != change.fields, "only rows that differ")
                    result[change.table, default: [:]][change.key] = change.fields
                case .delete:
                    #expect(staged[change.table]?[change.key] != nil, "only rows staging has")
                    result[change.table]?[change.key] = nil
                case .update:
                    Issue.record("no updates in a view")
                }
            }
        }
        #expect(chunks > 0 || view == staged)
        // Unknown: every key the backup's log or held values name, and nothing else — but when
        // recovering, not a row whose first unsynced change is an update and that the store holds.
        let logged = try await sqlite3(
            setup.backup,
            recovering
                ? """
                SELECT tbl || '/' || pk FROM _tether_held
                UNION SELECT tbl || '/' || pk FROM (SELECT tbl, pk, kind, min(seq) FROM _tether_log GROUP BY tbl, pk)
                  WHERE kind <> 'update' OR (tbl = 'orders' AND pk NOT IN (SELECT id FROM orders))
                    OR (tbl = 'items' AND pk NOT IN (SELECT sku FROM items))
                """
                : "SELECT tbl || '/' || pk FROM _tether_log UNION SELECT tbl || '/' || pk FROM _tether_held")
        #expect(unknown == Set(logged.stdout.split(separator: "\n").map(String.init)))
        if !recovering { #expect(setup.edited.isSubset(of: unknown), "unsynced inserts, updates, deletes and held rows are unknown") }
        #expect(written.isDisjoint(with: unknown))
        // When recovering, a row only updated whose staged row equals it in every column the
        // updates did not change is left out: it keeps its staged value (the recovery replays
        // the changed columns).
        let onlyUpdated = recovering ? try Self.onlyUpdatedColumns(setup.backup) : [:]
        for table in testSchema.tables.map(\.name) {
            let keys = Set((view[table] ?? [:]).keys).union((staged[table] ?? [:]).keys)
            for key in keys {
                let name = Self.name(table, key)
                var expected = unknown.contains(name) ? staged[table]?[key] : view[table]?[key]
                if let changed = onlyUpdated[name], !unknown.contains(name), let viewRow = view[table]?[key],
                    let stagedRow = staged[table]?[key], viewRow.filter({ !changed.contains($0.key) }) == stagedRow.filter({ !changed.contains($0.key) })
                {
                    expected = stagedRow
                    #expect(!written.contains(name), "\(name): only its replayed columns differ")
                }
                #expect(result[table]?[key] == expected, "\(table) \(key)")
            }
        }
    }

    /// The rows of the backup's log whose every entry is an update, with the columns they changed.
    static func onlyUpdatedColumns(_ backup: String) throws -> [String: Set<String>] {
        let queue = try DatabaseQueue(path: backup)
        defer { try? queue.close() }
        return try queue.read { db in
            var result: [String: Set<String>] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT tbl, pk, kind, cols FROM _tether_log ORDER BY seq") {
                let key: RowKey = switch (row["pk"] as DatabaseValue).storage {
                case .int64(let v): .integer(v)
                case .string(let v): .text(v)
                default: .text("?")
                }
                let name = Self.name(row["tbl"], key)
                let kind: String = row["kind"]
                let cols: String? = row["cols"]
                if kind != "update" {
                    result[name] = nil
                    result[name + "#mixed"] = []
                } else if result[name + "#mixed"] == nil {
                    result[name, default: []].formUnion((cols ?? "").split(separator: ",").map(String.init))
                }
            }
            return result.filter { !$0.key.hasSuffix("#mixed") }
        }
    }

    /// A recovering reset vouches for a row it only updated (its current values), not for one
    /// it inserted, deleted, or updated and then deleted; a discarding one for none of them.
    @Test(arguments: [true, false])
    func aRecoveringViewCarriesTheRowsItOnlyUpdated(recovering: Bool) async throws {
        let dir = try TemporaryDirectory(prefix: "tether-heal")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.resetInPlace(
            to: ArrayStateSource((1...4).map { StateRow(table: "items", key: .integer($0), fields: ["name": .text("item \($0)"), "price": .real(10)]) }),
            serverVersion: ServerVersion(version: 10, salt: 3), clientFile: ClientFileIdentity(id: 1, salt: 1))
        let app = try appConnection(store.path)
        try await app.write { db in
            try db.execute(sql: """
                UPDATE items SET name = 'changed' WHERE sku = 1;
                UPDATE items SET price = 11 WHERE sku = 2; DELETE FROM items WHERE sku = 2;
                DELETE FROM items WHERE sku = 3;
                INSERT INTO items (sku, name, price) VALUES (5, 'new', 1);
                """)
        }
        try app.close()
        // The restored server has none of them.
        let (backup, staging) = try await Self.backUpAndStage(store, in: dir, state: [], at: ServerVersion(version: 5, salt: 4))
        let reader = try HealViewReader(backup: backup, staging: staging, recovering: recovering)
        var unknown: Set<String> = []
        var rows: [String: [String: FieldValue]] = [:]
        for try await chunk in reader.chunks() {
            for change in chunk.unknown.changeset.changes { unknown.insert(Self.name(change.table, change.key)) }
            for change in chunk.rows.changeset.changes where change.kind == .insert { rows[Self.name(change.table, change.key)] = change.fields }
        }
        if recovering {
            #expect(unknown == ["items/2", "items/3", "items/5"])
            #expect(rows["items/1"]?["name"] == .text("changed"), "its current values: the device replays its change anyway")
            #expect(Set(rows.keys) == ["items/1", "items/4"])
        } else {
            #expect(unknown == ["items/1", "items/2", "items/3", "items/5"])
            #expect(Set(rows.keys) == ["items/4"])
        }
    }

    /// A row the device only updated, which the fetched state holds with the same values in
    /// every column the updates did not change, is not part of a recovering view: its changed
    /// columns reach the server as the recovery's replay. One whose other columns differ, or
    /// that the state lacks, or that was deleted and inserted again, is sent as before.
    @Test func aRecoveringViewLeavesOutRowsThatDifferOnlyInTheirReplayedColumns() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-heal")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let synced = (1...6).map { StateRow(table: "items", key: .integer($0), fields: ["name": .text("item \($0)"), "price": .real(10)]) }
        try await store.resetInPlace(
            to: ArrayStateSource(synced), serverVersion: ServerVersion(version: 10, salt: 3), clientFile: ClientFileIdentity(id: 1, salt: 1))
        let app = try appConnection(store.path)
        try await app.write { db in
            try db.execute(sql: """
                UPDATE items SET name = 'changed 1' WHERE sku = 1;
                UPDATE items SET name = 'changed 2' WHERE sku = 2;
                UPDATE items SET name = 'changed 3' WHERE sku = 3;
                UPDATE items SET price = 12 WHERE sku = 4; UPDATE items SET name = 'changed 4' WHERE sku = 4;
                DELETE FROM items WHERE sku = 5; INSERT INTO items (sku, name, price) VALUES (5, 'again', 10);
                """)
        }
        try app.close()
        // The restored server: 1 and 4 as synced; 2 with another price; 3 missing; 5 and 6 as synced.
        var state = synced.filter { $0.key != .integer(3) }
        state[1].fields["price"] = .real(99)
        let (backup, staging) = try await Self.backUpAndStage(store, in: dir, state: state, at: ServerVersion(version: 5, salt: 4))
        let reader = try HealViewReader(backup: backup, staging: staging, recovering: true)
        var unknown: Set<String> = []
        var rows: [String: [String: FieldValue]] = [:]
        for try await chunk in reader.chunks() {
            for change in chunk.unknown.changeset.changes { unknown.insert(Self.name(change.table, change.key)) }
            for change in chunk.rows.changeset.changes where change.kind == .insert { rows[Self.name(change.table, change.key)] = change.fields }
        }
        #expect(unknown == ["items/5"])
        #expect(Set(rows.keys) == ["items/2", "items/3"], "1 and 4 differ only in the columns the device changed")
        #expect(rows["items/2"] == ["name": .text("changed 2"), "price": .real(10)])
        #expect(rows["items/3"] == ["name": .text("changed 3"), "price": .real(10)])
    }

    @Test func aStagingStoreWithAnotherSchemaIsNotComparable() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-heal")
        defer { dir.remove() }
        let setup = try await Self.setUp(dir, seed: 1)
        var other = testSchema
        other.version = 2
        other.tables[1].columns.append(ColumnSchema(name: "colour", type: .text, nullable: true))
        let staging = try await makeStore(dir, name: "other.sqlite", schema: other)
        try staging.close()
        let reader = try HealViewReader(backup: setup.backup, staging: dir.appending("other.sqlite"))
        #expect(!reader.schemasMatch)
        #expect(reader.view == ServerVersion(version: 11, salt: 5))
    }

    @Test func aMissingBackupIsNotAStore() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-heal")
        defer { dir.remove() }
        let setup = try await Self.setUp(dir, seed: 2)
        #expect(throws: StoreError.notAStore(path: dir.appending("gone.sqlite"))) {
            _ = try HealViewReader(backup: dir.appending("gone.sqlite"), staging: setup.staging)
        }
    }

    /// The files are only read: neither changes, and a second iteration reads the same chunks.
    @Test func readingTheViewChangesNeitherFileAndRepeats() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-heal")
        defer { dir.remove() }
        let setup = try await Self.setUp(dir, seed: 3)
        let before = try (Data(contentsOf: URL(fileURLWithPath: setup.backup)), Data(contentsOf: URL(fileURLWithPath: setup.staging)))
        let reader = try HealViewReader(backup: setup.backup, staging: setup.staging, maxChanges: 5)
        var first: [HealViewChunk] = [], second: [HealViewChunk] = []
        for try await chunk in reader.chunks() { first.append(chunk) }
        for try await chunk in reader.chunks() { second.append(chunk) }
        #expect(first == second)
        #expect(!first.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: setup.backup)) == before.0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: setup.staging)) == before.1)
    }
}
