import Foundation
import GRDB
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport

/// Issue 46: a ready file must hold exactly what a store of its schema holds. Anything more —
/// an index (an erroring expression, a UNIQUE index on a constant), a table, a view, a trigger —
/// or a table defined otherwise would stay in the device's store and break applications' writes:
/// the agent refuses such a file (and downloads rows instead).
@Suite struct ReadyFileSchemaCheckTests {
    /// Changes a dishonest server could make to a ready file, with a word its refusal must name.
    enum Tampering: String, CaseIterable, CustomTestStringConvertible {
        case uniqueIndexOnAConstant = "unique-index-on-a-constant"
        case indexWithAnErroringExpression = "index-with-an-erroring-expression"
        case indexOnAnInternalTable = "index-on-an-internal-table"
        case extraTable = "extra-table"
        case extraInternalTable = "extra-internal-table"
        case changedColumnType = "changed-column-type"
        case droppedColumnChecks = "dropped-column-checks"
        case extraTrigger = "extra-trigger"
        case extraView = "extra-view"
        var testDescription: String { rawValue }

        var sql: String {
            switch self {
            case .uniqueIndexOnAConstant: "CREATE UNIQUE INDEX one_row ON orders ((1))"
            case .indexWithAnErroringExpression: "CREATE INDEX no_rows ON items (CASE WHEN sku > 1 THEN abs(sku * 0 - 9223372036854775807 - 1) ELSE 0 END)"
            case .indexOnAnInternalTable: "CREATE INDEX log_by_kind ON _tether_log (kind)"
            case .extraTable: "CREATE TABLE extra (x)"
            case .extraInternalTable: "CREATE TABLE _tether_extra (x)"
            case .changedColumnType:
                "DROP TABLE items; CREATE TABLE items (sku INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, price TEXT)"
            case .droppedColumnChecks:
                "DROP TABLE items; CREATE TABLE items (sku INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, price REAL)"
            case .extraTrigger: "CREATE TRIGGER no_writes BEFORE INSERT ON orders BEGIN SELECT RAISE(ABORT, 'no'); END"
            case .extraView: "CREATE VIEW totals AS SELECT sum(total) FROM orders"
            }
        }

        /// What the refusal names.
        var named: String {
            switch self {
            case .uniqueIndexOnAConstant: "one_row"
            case .indexWithAnErroringExpression: "no_rows"
            case .indexOnAnInternalTable: "log_by_kind"
            case .extraTable: "extra"
            case .extraInternalTable: "_tether_extra"
            case .changedColumnType, .droppedColumnChecks: "items"
            case .extraTrigger: "no_writes"
            case .extraView: "totals"
            }
        }
    }

    static let version = ServerVersion(version: 12, salt: 3)

    /// A ready file as the server makes one (docs/store.md "Ready files"): a staging store of
    /// the schema, filled with state rows, completed without an identity, closed.
    static func readyFile(_ dir: TemporaryDirectory, readOnly: Bool = false) async throws -> String {
        let path = dir.appending("v12.db")
        let store = try await PartitionStore.open(path: path, partition: testPartition, schema: testSchema, place: .staging)
        try await store.insertStateRows([
            StateRow(table: "orders", key: .text("o1"), fields: order()),
            StateRow(table: "items", key: .integer(1), fields: ["name": .text("pen"), "price": .real(2)]),
        ])
        if readOnly { try await store.setReadOnly(true) }
        try await store.completeState(serverVersion: version, clientFile: nil)
        try store.close()
        return path
    }

    /// How the agent takes a downloaded file: opened as a staging store of the bind's schema,
    /// then checked. The refusal's description, nil when the file is accepted.
    static func refusal(_ path: String) async -> String? {
        do {
            let store = try await PartitionStore.open(path: path, partition: testPartition, schema: testSchema, place: .staging)
            defer { try? store.close() }
            try await store.checkReadyFileObjects()
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func anHonestReadyFileIsAccepted() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-ready-check")
        defer { dir.remove() }
        #expect(await Self.refusal(try await Self.readyFile(dir)) == nil)
    }

    @Test func anHonestReadOnlyReadyFileIsAccepted() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-ready-check")
        defer { dir.remove() }
        #expect(await Self.refusal(try await Self.readyFile(dir, readOnly: true)) == nil)
    }

    @Test(arguments: Tampering.allCases)
    func aReadyFileWithAnythingElseIsRefused(_ tampering: Tampering) async throws {
        let dir = try TemporaryDirectory(prefix: "tether-ready-check")
        defer { dir.remove() }
        let path = try await Self.readyFile(dir)
        let application = try appConnection(path)
        try await application.write { db in try db.execute(sql: tampering.sql) }
        try application.close()
        let refusal = await Self.refusal(path)
        #expect(refusal != nil, "the file was accepted")
        #expect(refusal?.contains(tampering.named) == true, "\(refusal ?? "")")
    }
}
