import GRDB
import TetherProtocol

/// Compares a store's actual user tables with a `Schema`, naming the first table or column
/// that differs. Never changes anything.
enum SchemaVerifier {
    /// Tables that belong to the agent or to SQLite and are not user tables.
    static func isInternal(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower.hasPrefix("_tether") || lower.hasPrefix("sqlite_") || lower == "grdb_migrations"
    }

    /// Names of the user tables present in the store.
    static func userTables(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .filter { !isInternal($0) }
    }

    /// Throws `.schemaMismatch` for the first difference. With `allowMissingTables`, tables of
    /// the schema that do not exist yet are returned instead (a new store creates them).
    @discardableResult
    static func verify(_ db: Database, schema: Schema, path: String, allowMissingTables: Bool) throws -> [TableSchema] {
        let present = try userTables(db)
        for name in present where schema.table(name) == nil {
            throw StoreError.schemaMismatch(path: path, table: name, column: nil, problem: "the table is not in the schema")
        }
        var missing: [TableSchema] = []
        for table in schema.tables {
            guard present.contains(table.name) else {
                if allowMissingTables { missing.append(table); continue }
                throw StoreError.schemaMismatch(path: path, table: table.name, column: nil, problem: "the table is missing")
            }
            try verify(db, table: table, path: path)
        }
        return missing
    }

    static func verify(_ db: Database, table: TableSchema, path: String) throws {
        let rows = try Row.fetchAll(db, sql: "PRAGMA table_info(\(StoreSQL.quote(table.name)))")
        var seen: Set<String> = []
        for row in rows {
            let name: String = row["name"]
            seen.insert(name)
            guard let expected = table.column(name) else {
                throw StoreError.schemaMismatch(
                    path: path, table: table.name, column: name, problem: "the column is not in the schema")
            }
            let declared = (row["type"] as String? ?? "").uppercased()
            if declared != expected.type.sqliteType {
                throw StoreError.schemaMismatch(
                    path: path, table: table.name, column: name,
                    problem: "declared \(declared.isEmpty ? "without a type" : declared), expected \(expected.type.sqliteType) (\(expected.typeSpelling))")
            }
            let notNull = (row["notnull"] as Int? ?? 0) != 0
            if notNull == expected.nullable {
                throw StoreError.schemaMismatch(
                    path: path, table: table.name, column: name,
                    problem: expected.nullable ? "NOT NULL, expected nullable" : "nullable, expected NOT NULL")
            }
            let isKey = (row["pk"] as Int? ?? 0) != 0
            if isKey != (name == table.primaryKey) {
                throw StoreError.schemaMismatch(
                    path: path, table: table.name, column: name,
                    problem: isKey ? "is part of the primary key, expected \(table.primaryKey)" : "is not the primary key")
            }
        }
        for column in table.columns where !seen.contains(column.name) {
            throw StoreError.schemaMismatch(
                path: path, table: table.name, column: column.name, problem: "the column is missing")
        }
    }
}
