import GRDB
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherStore

/// A subscription filter selects in SQLite exactly the rows it matches in Swift: random filters
/// (seeded) over random rows with NULLs, numbers of both kinds, text and booleans, rendered as
/// SQL with placeholders (``ResolvedFilter/sql(placeholder:quote:)``) and run by SQLite itself.
struct SubscriptionFilterSQLiteTests {
    static let table = TableSchema(name: "t", primaryKey: "id", columns: [
        ColumnSchema(name: "id", type: .integer),
        ColumnSchema(name: "n", type: .integer, nullable: true),
        ColumnSchema(name: "r", type: .real, nullable: true),
        ColumnSchema(name: "s", type: .text, nullable: true),
        ColumnSchema(name: "b", type: .boolean, nullable: true),
    ])

    static func operand(_ column: String, _ random: inout SeededRandom) -> String {
        switch column {
        case "n": String(Int.random(in: -3...3, using: &random))
        case "r": random.chance(0.5) ? String(Int.random(in: -3...3, using: &random)) : String(Double(Int.random(in: -6...6, using: &random)) / 2)
        case "s": ["'a'", "'b'", "'ab'", "''", "'B'", "{name}"].randomElement(using: &random)!
        default: random.chance(0.5) ? "TRUE" : "FALSE"
        }
    }

    static func predicate(_ random: inout SeededRandom, depth: Int) -> String {
        if depth < 3, random.chance(0.35) {
            let parts = (0..<Int.random(in: 2...3, using: &random)).map { _ in predicate(&random, depth: depth + 1) }
            return "(" + parts.joined(separator: random.chance(0.5) ? " AND " : " OR ") + ")"
        }
        if depth < 3, random.chance(0.1) { return "NOT " + predicate(&random, depth: depth + 1) }
        let column = ["n", "r", "s", "b"].randomElement(using: &random)!
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return "\(column) IS \(random.chance(0.5) ? "NOT " : "")NULL"
        case 1 where column != "b":
            let a = operand(column, &random), b = operand(column, &random)
            return "\(column) \(random.chance(0.3) ? "NOT " : "")BETWEEN \(a) AND \(b)"
        case 2:
            let values = (0..<Int.random(in: 1...3, using: &random)).map { _ in operand(column, &random) }
            return "\(column) \(random.chance(0.3) ? "NOT " : "")IN (\(values.joined(separator: ", ")))"
        case 3 where column == "b":
            return "b"
        default:
            let comparison = column == "b" ? ["=", "!="].randomElement(using: &random)! : ["=", "!=", "<>", "<", "<=", ">", ">="].randomElement(using: &random)!
            return "\(column) \(comparison) \(operand(column, &random))"
        }
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func sqliteSelectsWhatTheFilterMatches(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let database = try DatabaseQueue()
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, r REAL, s TEXT, b INTEGER)")
        }
        var rows: [Int64: [String: FieldValue]] = [:]
        for id in Int64(1)...60 {
            func maybe(_ value: FieldValue) -> FieldValue { random.chance(0.2) ? .null : value }
            let row: [String: FieldValue] = [
                "id": .integer(id), "n": maybe(.integer(Int64.random(in: -3...3, using: &random))),
                "r": maybe(.real(Double(Int.random(in: -6...6, using: &random)) / 2)),
                "s": maybe(.text(["a", "b", "ab", "", "B", "till"].randomElement(using: &random)!)),
                "b": maybe(.integer(Int64.random(in: 0...1, using: &random))),
            ]
            rows[id] = row
            try database.write { db in
                try db.execute(
                    sql: "INSERT INTO t (id, n, r, s, b) VALUES (?, ?, ?, ?, ?)",
                    arguments: StatementArguments(["id", "n", "r", "s", "b"].map { row[$0]!.databaseValue }))
            }
        }
        for _ in 0..<300 {
            let text = Self.predicate(&random, depth: 0)
            let filter = try SubscriptionFilter(text, table: Self.table)
                .resolved(with: FilterParameters(name: "till"), now: 0, schema: Self.table)
            let sql = filter.sql(placeholder: { _ in "?" }, quote: { "\"\($0)\"" })
            let selected = try database.read { db in
                try Set(Int64.fetchAll(db, sql: "SELECT id FROM t WHERE \(sql.text)", arguments: StatementArguments(sql.arguments.map(\.databaseValue))))
            }
            let matched = Set(rows.filter { filter.matches($0.value) }.keys)
            #expect(selected == matched, "\(text)")
            if selected != matched { return }
        }
    }
}
