import Foundation
import GRDB
import Testing
import TetherProtocol
@testable import TetherStore

@Suite struct StoreSQLTests {
    /// The CHECK of release 0.1's tables, which stores created then keep.
    static func typeofCheck(_ column: ColumnSchema) -> String {
        let c = StoreSQL.quote(column.name)
        let typeCheck: String
        switch column.type {
        case .integer: typeCheck = "typeof(\(c)) = 'integer'"
        case .real: typeCheck = "typeof(\(c)) = 'real'"
        case .text: typeCheck = "typeof(\(c)) = 'text'"
        case .blob: typeCheck = "typeof(\(c)) = 'blob'"
        case .boolean: typeCheck = "typeof(\(c)) = 'integer' AND \(c) IN (0, 1)"
        }
        return column.nullable ? "\(c) IS NULL OR (\(typeCheck))" : typeCheck
    }

    /// Values an application may bind or write: every storage class, the edges of integer and
    /// real, numbers spelled as text, text and blobs that compare near the boundaries.
    static let values: [DatabaseValue] = {
        var values: [DatabaseValue] = [.null]
        let integers: [Int64] = [0, 1, -1, 2, 42, .max, .min]
        values += integers.map(\.databaseValue)
        let reals: [Double] = [0, -0.0, 1, 1.5, -2.5, 1e30, -1e30, 9.223372036854775807e18, 9.3e18, -9.3e18, 1e-300, .infinity, -.infinity]
        values += reals.map(\.databaseValue)
        let texts = ["", "0", "1", "1.0", "1.5", " 12", "12 ", "12abc", "abc", "0x10", "1e3", "9223372036854775808", "\u{0}", "é", "true", "x"]
        values += texts.map(\.databaseValue)
        let blobs: [[UInt8]] = [[], [0], [0x31], [0xff, 0xfe], Array("abc".utf8)]
        values += blobs.map { Data($0).databaseValue }
        return values
    }()

    static let columns: [ColumnSchema] = ColumnType.allCases.flatMap { type in
        [ColumnSchema(name: "c", type: type), ColumnSchema(name: "c", type: type, nullable: true)]
    }

    /// What inserting `value` left: nil when refused, else the stored value's type and text.
    static func outcome(_ db: Database, table: String, key: Int, value: DatabaseValue) throws -> String? {
        do {
            try db.execute(sql: "INSERT INTO \(table) (k, c) VALUES (?, ?)", arguments: [key, value])
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            return nil
        }
        return try String.fetchOne(db, sql: "SELECT typeof(c) || ':' || quote(c) FROM \(table) WHERE k = ?", arguments: [key])
    }

    @Test(arguments: columns)
    func theComparisonChecksAcceptExactlyWhatTypeofAccepts(_ column: ColumnSchema) throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE new (k INTEGER PRIMARY KEY, \(StoreSQL.columnDefinition(column, isPrimaryKey: false)))")
            let old = [StoreSQL.quote(column.name), column.type.sqliteType, column.nullable ? "" : "NOT NULL", "CHECK (\(Self.typeofCheck(column)))"]
            try db.execute(sql: "CREATE TABLE old (k INTEGER PRIMARY KEY, \(old.joined(separator: " ")))")
            var accepted = 0
            for (key, value) in Self.values.enumerated() {
                let new = try Self.outcome(db, table: "new", key: key, value: value)
                let before = try Self.outcome(db, table: "old", key: key, value: value)
                #expect(new == before, "\(column.typeSpelling): \(value) stored as \(new ?? "refused"), typeof form \(before ?? "refused")")
                if new != nil { accepted += 1 }
            }
            // Not vacuous: each type accepts some values and refuses others.
            #expect(accepted > 0 && accepted < Self.values.count)
        }
    }

    @Test func aRefusedValueNamesTheColumnAndItsType() throws {
        let queue = try DatabaseQueue()
        let table = TableSchema(name: "orders", primaryKey: "id", columns: [
            ColumnSchema(name: "id", type: .text),
            ColumnSchema(name: "total", type: .real),
            ColumnSchema(name: "paid", type: .boolean),
            ColumnSchema(name: "note", type: .text, nullable: true),
        ])
        try queue.write { db in
            try db.execute(sql: StoreSQL.createTable(table))
            for (values, message) in [
                ("'a', 'lots', 1, NULL", "total must be real"),
                ("'a', 1.5, 2, NULL", "paid must be 0 or 1"),
                ("'a', 1.5, 1, x'00'", "note must be text or NULL"),
                ("x'01', 1.5, 1, NULL", "id must be text"),
            ] {
                #expect {
                    try db.execute(sql: "INSERT INTO orders (id, total, paid, note) VALUES (\(values))")
                } throws: { error in
                    (error as? DatabaseError)?.message?.contains("CHECK constraint failed: \(message)") == true
                }
            }
        }
    }
}
