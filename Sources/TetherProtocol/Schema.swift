/// Column types of docs/contract.md "Partitions and stores". A trailing `?` in `schema.toml` makes a column nullable.
package enum ColumnType: String, Sendable, Hashable, Codable, CaseIterable {
    case integer, real, text, blob, boolean

    /// The SQLite type name used in `CREATE TABLE`.
    package var sqliteType: String {
        switch self {
        case .integer, .boolean: "INTEGER"
        case .real: "REAL"
        case .text: "TEXT"
        case .blob: "BLOB"
        }
    }
}

package struct ColumnSchema: Sendable, Hashable, Codable {
    package var name: String
    package var type: ColumnType
    package var nullable: Bool

    package init(name: String, type: ColumnType, nullable: Bool = false) {
        self.name = name
        self.type = type
        self.nullable = nullable
    }

    /// The `schema.toml` spelling: `text`, `text?`.
    package var typeSpelling: String { type.rawValue + (nullable ? "?" : "") }

    /// Parses `text`, `real?`, …; nil for anything else.
    package init?(name: String, spelling: String) {
        var s = Substring(spelling)
        let nullable = s.hasSuffix("?")
        if nullable { s = s.dropLast() }
        guard let type = ColumnType(rawValue: String(s)) else { return nil }
        self.init(name: name, type: type, nullable: nullable)
    }
}

package struct TableSchema: Sendable, Hashable, Codable {
    package var name: String
    package var primaryKey: String
    /// Columns sorted by name, the primary key among them.
    package var columns: [ColumnSchema]

    package init(name: String, primaryKey: String, columns: [ColumnSchema]) {
        self.name = name
        self.primaryKey = primaryKey
        self.columns = columns.sorted { $0.name < $1.name }
    }

    package func column(_ name: String) -> ColumnSchema? { columns.first { $0.name == name } }
    package var primaryKeyColumn: ColumnSchema? { column(primaryKey) }
    /// Every column but the primary key, sorted by name.
    package var valueColumns: [ColumnSchema] { columns.filter { $0.name != primaryKey } }
}

/// The server's schema (docs/contract.md: Server): a version and the tables every partition has.
package struct Schema: Sendable, Hashable, Codable {
    package var version: Int
    /// Tables sorted by name.
    package var tables: [TableSchema]

    package init(version: Int, tables: [TableSchema]) {
        self.version = version
        self.tables = tables.sorted { $0.name < $1.name }
    }

    package func table(_ name: String) -> TableSchema? { tables.first { $0.name == name } }

    /// Every problem with this schema, each naming the table and column at fault; empty when valid.
    package func problems() -> [String] {
        var problems: [String] = []
        if version < 1 { problems.append("version: must be a positive integer, got \(version)") }
        if tables.isEmpty { problems.append("tables: the schema defines no table") }
        for table in tables {
            let where_ = "tables.\(table.name)"
            if let reason = Self.identifierProblem(table.name) {
                problems.append("\(where_): table name \(reason)")
            }
            if table.columns.isEmpty { problems.append("\(where_).columns: no column defined") }
            for column in table.columns {
                if let reason = Self.identifierProblem(column.name) {
                    problems.append("\(where_).columns.\(column.name): column name \(reason)")
                }
            }
            if let key = table.primaryKeyColumn {
                if key.type != .integer && key.type != .text {
                    problems.append(
                        "\(where_).primary_key: column \(key.name) is \(key.type.rawValue); a primary key must be integer or text")
                }
                if key.nullable {
                    problems.append("\(where_).primary_key: column \(key.name) is nullable; a primary key must not be")
                }
            } else {
                problems.append(
                    "\(where_).primary_key: \(table.primaryKey.debugDescription) is not one of the table's columns")
            }
        }
        return problems
    }

    /// Why `name` cannot name a table or column, or nil when it can.
    package static func identifierProblem(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        guard let first = bytes.first else { return "is empty" }
        func letter(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F }
        func digit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        guard letter(first), bytes.allSatisfy({ letter($0) || digit($0) }), bytes.count <= 64 else {
            return "\(name.debugDescription) must match [A-Za-z_][A-Za-z0-9_]{0,63}"
        }
        if name.lowercased().hasPrefix("_tether") { return "\(name.debugDescription) is reserved (names starting with _tether belong to the agent)" }
        if name.lowercased().hasPrefix("sqlite_") { return "\(name.debugDescription) is reserved by SQLite" }
        return nil
    }
}
