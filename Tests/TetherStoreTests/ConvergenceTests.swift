import Foundation
import GRDB
import Testing
import TetherTestSupport
import TetherProtocol
import TetherStore


/// A tiny in-memory sync server, as docs/sync-model.md describes it: uploads are applied in
/// arrival order (the server order) and become versions; downloads hand each device the
/// others' changes and its own versions as empty acknowledgements, each with the device's
/// integrated seq at that version.
struct SimulatedServer {
    struct Version {
        var number: Int64
        var salt: Int64
        var origin: Int
        var changeset: Changeset
        var integrated: [Int: Int64]
    }

    var state: [String: [RowKey: [String: FieldValue]]] = [:]
    var history: [Version] = []
    var integrated: [Int: Int64] = [:]

    mutating func upload(from client: Int, _ batch: UploadChangeset, salt: Int64) {
        // A batch is collapsed, so it is taken whole or not at all: only when it continues
        // exactly where the client file's integrated changes end. A re-sent batch
        // (`lastSeq <= integrated`) is ignored; one after a lost batch is refused (the device
        // resumes from the integrated seq when it reconnects).
        guard batch.afterSeq == integrated[client, default: 0] else { return }
        for change in batch.changeset.changes {
            // The row-apply rules the real server's storages use.
            let row = state[change.table]?[change.key]
            state[change.table, default: [:]][change.key] = change.write(rowExists: row != nil).applied(to: row)
        }
        integrated[client] = batch.lastSeq
        history.append(Version(
            number: Int64(history.count + 1), salt: salt, origin: client, changeset: batch.changeset,
            integrated: integrated))
    }

    func download(for client: Int, after version: Int64) -> [DownloadEntry] {
        history.filter { $0.number > version }.map { v in
            DownloadEntry(
                serverVersion: ServerVersion(version: v.number, salt: v.salt),
                integratedClientSeq: v.integrated[client, default: 0],
                changeset: v.origin == client ? Changeset() : v.changeset)
        }
    }
}

@Suite struct ConvergenceTests {
    static let keys: [String] = ["a", "b", "c", "d"]

    static func randomValue(_ column: ColumnSchema, _ rng: inout SeededRandom) -> DatabaseValue {
        if column.nullable && Int.random(in: 0..<4, using: &rng) == 0 { return .null }
        switch column.type {
        case .integer: return Int64.random(in: -3...3, using: &rng).databaseValue
        case .real: return (Double(Int.random(in: -1000...1000, using: &rng)) / 7).databaseValue
        case .text: return ["x", "y", "zz", "ünï", ""].randomElement(using: &rng)!.databaseValue
        case .blob: return Data((0..<Int.random(in: 1...4, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }).databaseValue
        case .boolean: return Int64.random(in: 0...1, using: &rng).databaseValue
        }
    }

    /// One application statement on a random row (insert, replace, update of some fields, delete).
    static func randomStatement(_ rng: inout SeededRandom) -> (String, StatementArguments) {
        let table = testSchema.tables.randomElement(using: &rng)!
        let key: DatabaseValue = table.name == "items"
            ? Int64.random(in: 1...4, using: &rng).databaseValue : keys.randomElement(using: &rng)!.databaseValue
        let t = "\"\(table.name)\"", pk = "\"\(table.primaryKey)\""
        switch Int.random(in: 0..<10, using: &rng) {
        case 0..<3, 3:
            let verb = Bool.random(using: &rng) ? "INSERT OR IGNORE" : "INSERT OR REPLACE"
            let columns = table.columns.map { "\"\($0.name)\"" }.joined(separator: ", ")
            let marks = table.columns.map { _ in "?" }.joined(separator: ", ")
            let values = table.columns.map { $0.name == table.primaryKey ? key : randomValue($0, &rng) }
            return ("\(verb) INTO \(t) (\(columns)) VALUES (\(marks))", StatementArguments(values))
        case 4..<8:
            let chosen = table.valueColumns.filter { _ in Bool.random(using: &rng) }
            let columns = chosen.isEmpty ? [table.valueColumns[0]] : chosen
            let sets = columns.map { "\"\($0.name)\" = ?" }.joined(separator: ", ")
            return ("UPDATE \(t) SET \(sets) WHERE \(pk) = ?", StatementArguments(columns.map { randomValue($0, &rng) } + [key]))
        default:
            return ("DELETE FROM \(t) WHERE \(pk) = ?", [key])
        }
    }

    /// Fixed seeds; `TETHER_STORE_SEED=<n>` replays one seed (each run prints its seed).
    static var seeds: [UInt64] {
        if let text = ProcessInfo.processInfo.environment["TETHER_STORE_SEED"], let seed = UInt64(text) { return [seed] }
        return [1, 7, 42, 2024, 31337]
    }

    @Test(arguments: seeds)
    func randomInterleavingsConverge(seed: UInt64) async throws {
        print("ConvergenceTests seed \(seed)")
        var rng = SeededRandom(seed: seed)
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let deviceCount = 3
        var stores: [PartitionStore] = []
        var apps: [DatabaseQueue] = []
        for d in 0..<deviceCount {
            let store = try await makeStore(dir, name: "device\(d).sqlite")
            stores.append(store)
            apps.append(try appConnection(store.path))
        }
        var server = SimulatedServer()
        var uploaded = Array(repeating: Int64(0), count: deviceCount)
        var lastDownload = Array(repeating: [DownloadEntry](), count: deviceCount)

        func upload(_ d: Int, limit: Int) async throws {
            guard let batch = try await stores[d].pendingChanges(after: uploaded[d], limit: limit) else { return }
            server.upload(from: d, batch, salt: Int64.random(in: 1...Int64.max, using: &rng))
            uploaded[d] = batch.lastSeq
        }
        func download(_ d: Int, all: Bool) async throws {
            let version = try await stores[d].metadata().serverVersion.version
            var entries = server.download(for: d, after: version)
            if !all && !entries.isEmpty { entries = Array(entries.prefix(Int.random(in: 1...entries.count, using: &rng))) }
            try await stores[d].apply(entries)
            lastDownload[d] = entries
        }

        for _ in 0..<120 {
            let d = Int.random(in: 0..<deviceCount, using: &rng)
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<45:
                let statements = (0..<Int.random(in: 1...3, using: &rng)).map { _ in Self.randomStatement(&rng) }
                let rollBack = Int.random(in: 0..<8, using: &rng) == 0
                try await apps[d].writeWithoutTransaction { db in
                    try db.inTransaction {
                        for (sql, arguments) in statements { try db.execute(sql: sql, arguments: arguments) }
                        return rollBack ? .rollback : .commit
                    }
                }
            case 45..<65:
                try await upload(d, limit: Int.random(in: 1...6, using: &rng))
            case 65..<87:
                try await download(d, all: false)
            case 87..<92:
                try await stores[d].collapsePendingChanges(after: uploaded[d])
            case 92..<96:
                try await stores[d].apply(lastDownload[d])  // re-delivery is harmless
            case 96..<98:
                // An upload lost in transit: the device believes it sent the batch.
                if let batch = try await stores[d].pendingChanges(after: uploaded[d], limit: 3) { uploaded[d] = batch.lastSeq }
            default:
                // Reconnect: the server tells the device where its integrated changes end, and
                // the device resumes uploading from there.
                uploaded[d] = server.integrated[d, default: 0]
            }
        }

        // Quiesce: reconnect, upload everything, download everything, until nothing moves.
        for _ in 0..<4 {
            for d in 0..<deviceCount {
                uploaded[d] = server.integrated[d, default: 0]
                while try await stores[d].pendingChanges(after: uploaded[d]) != nil { try await upload(d, limit: 1000) }
            }
            for d in 0..<deviceCount { try await download(d, all: true) }
        }
        let expected = CanonicalDump.dump(schema: testSchema, rows: server.state)
        for d in 0..<deviceCount {
            let dump = try await stores[d].canonicalDump()
            #expect(dump == expected, "seed \(seed): device \(d) diverged from the server")
            #expect(try await stores[d].pendingChangeCount() == 0, "seed \(seed): device \(d) kept pending changes")
            #expect(try await stores[d].metadata().serverVersion.version == Int64(server.history.count))
        }
        #expect(server.history.count > 5)
        for d in 0..<deviceCount {
            try apps[d].close()
            try stores[d].close()
        }
    }
}
