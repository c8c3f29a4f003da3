import TetherProtocol

/// The SQL text of a store's user tables and triggers. Table and column names are validated by
/// `Schema.problems()` (`[A-Za-z_][A-Za-z0-9_]*`), so double-quoting them is always enough.
enum StoreSQL {
    static func quote(_ identifier: String) -> String { "\"\(identifier)\"" }

    /// A string literal (names only: partition, table and column names never hold quotes, but
    /// doubling them keeps this correct for any text).
    static func literal(_ text: String) -> String {
        "'" + String(text.flatMap { $0 == "'" ? ["'", "'"] : [$0] }) + "'"
    }

    /// The CHECK expression a column's values must satisfy (docs/contract.md: Partitions and
    /// stores types; `boolean` is 0/1), written with comparisons rather than `typeof()`: SQLite
    /// orders values NULL < numbers < text < blobs, and the column's affinity has already
    /// converted what converts losslessly, so a comparison says the storage class without a
    /// function call per value (docs/store.md, *Layout*). NULL passes (the result is NULL): a
    /// column that is not nullable refuses it with `NOT NULL`.
    /// Tables created by release 0.1 keep their `typeof()` form; the two accept and refuse the
    /// same values (StoreSQLTests).
    static func check(_ column: ColumnSchema) -> String {
        let c = quote(column.name)
        switch column.type {
        // An integer equals itself cast to an integer; a real the affinity left as it is (1.5,
        // 1e30), text and blobs do not.
        case .integer: return "\(c) = CAST(\(c) AS INTEGER)"
        case .real: return "\(c) < ''"
        case .text: return "\(c) >= '' AND \(c) < x''"
        case .blob: return "\(c) >= x''"
        case .boolean: return "\(c) IN (0, 1)"
        }
    }

    /// The name of a column's CHECK constraint, which SQLite puts in the error an application
    /// gets for a value of another type: `CHECK constraint failed: total must be real`.
    static func checkName(_ column: ColumnSchema) -> String {
        let what: String
        switch column.type {
        case .integer: what = "an integer"
        case .real: what = "real"
        case .text: what = "text"
        case .blob: what = "a blob"
        case .boolean: what = "0 or 1"
        }
        return "\(column.name) must be \(what)\(column.nullable ? " or NULL" : "")"
    }

    /// One column definition of `CREATE TABLE` / `ALTER TABLE … ADD COLUMN`.
    static func columnDefinition(_ column: ColumnSchema, isPrimaryKey: Bool) -> String {
        var parts = [quote(column.name), column.type.sqliteType]
        if !column.nullable { parts.append("NOT NULL") }
        if isPrimaryKey { parts.append("PRIMARY KEY") }
        parts.append("CONSTRAINT \(quote(checkName(column))) CHECK (\(check(column)))")
        return parts.joined(separator: " ")
    }

    static func createTable(_ table: TableSchema) -> String {
        // The primary key first, then the other columns by name (the order `SELECT *` shows).
        let ordered = table.columns.filter { $0.name == table.primaryKey } + table.valueColumns
        let columns = ordered.map { columnDefinition($0, isPrimaryKey: $0.name == table.primaryKey) }
        return "CREATE TABLE \(quote(table.name)) (\n  " + columns.joined(separator: ",\n  ") + "\n)"
    }

    /// Writes a whole row (key, then every value column in schema order): inserted, or the
    /// existing row with the same key made equal to it.
    static func upsertWholeRow(_ table: TableSchema) -> String {
        let values = table.valueColumns.map { quote($0.name) }
        let columns = ([quote(table.primaryKey)] + values).joined(separator: ", ")
        let marks = Array(repeating: "?", count: values.count + 1).joined(separator: ", ")
        let onConflict = values.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + values.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return "INSERT INTO \(quote(table.name)) (\(columns)) VALUES (\(marks)) ON CONFLICT(\(quote(table.primaryKey))) \(onConflict)"
    }

    /// Writes `columns` of a row (key first, then the columns in the order given): inserted,
    /// or the existing row's `columns` set (its other columns kept).
    static func upsertColumns(_ table: TableSchema, _ columns: [String]) -> String {
        let names = columns.map(quote)
        let marks = Array(repeating: "?", count: names.count + 1).joined(separator: ", ")
        let onConflict = names.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + names.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return "INSERT INTO \(quote(table.name)) (\(([quote(table.primaryKey)] + names).joined(separator: ", "))) VALUES (\(marks)) ON CONFLICT(\(quote(table.primaryKey))) \(onConflict)"
    }

    /// Sets `columns` of the row (values first, in the order given, then the key).
    static func updateColumns(_ table: TableSchema, _ columns: [String]) -> String {
        let assignments = columns.map { "\(quote($0)) = ?" }.joined(separator: ", ")
        return "UPDATE \(quote(table.name)) SET \(assignments) WHERE \(quote(table.primaryKey)) = ?"
    }

    /// Reads a row's value columns in schema order (`1` for a table with none) by its key.
    static func selectValues(_ table: TableSchema) -> String {
        let list = table.valueColumns.isEmpty ? "1" : table.valueColumns.map { quote($0.name) }.joined(separator: ", ")
        return "SELECT \(list) FROM \(quote(table.name)) WHERE \(quote(table.primaryKey)) = ?"
    }

    /// Deletes the row with the key.
    static func deleteRow(_ table: TableSchema) -> String {
        "DELETE FROM \(quote(table.name)) WHERE \(quote(table.primaryKey)) = ?"
    }

    static func addColumn(_ column: ColumnSchema, to table: String) -> String {
        "ALTER TABLE \(quote(table)) ADD COLUMN \(columnDefinition(column, isPrimaryKey: false))"
    }

    // MARK: Triggers

    /// True while the agent applies server changes inside its own transaction. Other
    /// connections only ever see the committed value 0 (or no row, which also means "capture").
    static let notApplying = "(SELECT active FROM _tether_apply WHERE id = 1) IS NOT 1"
    static let isReadOnly = "(SELECT read_only FROM _tether_meta WHERE id = 1) IS 1"

    /// Name prefix of every trigger the store installs.
    static let triggerPrefix = "_tether_trg_"

    /// The message of the error an application write to a read-only store fails with (docs/contract.md: Partitions and stores).
    static func readOnlyMessage(partition: String) -> String { "partition \(partition) is read-only" }

    /// Every trigger of `table`, by name: capture of inserts, updates (same key), key changes
    /// (captured as delete of the old key + insert of the new one) and deletes, each one
    /// `_tether_log` row naming the row (an update also its changed columns) — never the values,
    /// which stay in the row; and, on a read-only store only, the guards that refuse application
    /// writes (installed and removed with the flag, so a writable store's writes pay nothing for
    /// them).
    static func triggers(for table: TableSchema, partition: String, readOnly: Bool) -> [(name: String, sql: String)] {
        let t = quote(table.name)
        let tableLiteral = literal(table.name)
        let pk = quote(table.primaryKey)
        let values = table.valueColumns.map(\.name)
        let prefix = triggerPrefix + table.name

        func logChange(_ kind: String, key: String) -> String {
            "INSERT INTO _tether_log (tbl, pk, kind) VALUES (\(tableLiteral), \(key), '\(kind)');"
        }
        func changed(_ column: String) -> String { "OLD.\(quote(column)) IS NOT NEW.\(quote(column))" }

        var result: [(String, String)] = []
        result.append((prefix + "_ins", """
            CREATE TRIGGER \(quote(prefix + "_ins")) AFTER INSERT ON \(t)
            WHEN \(notApplying)
            BEGIN
              \(logChange("insert", key: "NEW.\(pk)"))
            END
            """))
        if !values.isEmpty {
            let anyChanged = values.map(changed).joined(separator: " OR ")
            // `cols`: the changed columns, comma-separated (the leading comma cut by substr).
            let columnList = values.map { "CASE WHEN \(changed($0)) THEN \(literal("," + $0)) ELSE '' END" }
                .joined(separator: "\n        || ")
            result.append((prefix + "_upd", """
                CREATE TRIGGER \(quote(prefix + "_upd")) AFTER UPDATE ON \(t)
                WHEN \(notApplying) AND OLD.\(pk) IS NEW.\(pk) AND (\(anyChanged))
                BEGIN
                  INSERT INTO _tether_log (tbl, pk, kind, cols) VALUES (\(tableLiteral), NEW.\(pk), 'update', substr(
                        \(columnList), 2));
                END
                """))
        }
        result.append((prefix + "_rekey", """
            CREATE TRIGGER \(quote(prefix + "_rekey")) AFTER UPDATE ON \(t)
            WHEN \(notApplying) AND OLD.\(pk) IS NOT NEW.\(pk)
            BEGIN
              \(logChange("delete", key: "OLD.\(pk)"))
              \(logChange("insert", key: "NEW.\(pk)"))
            END
            """))
        result.append((prefix + "_del", """
            CREATE TRIGGER \(quote(prefix + "_del")) AFTER DELETE ON \(t)
            WHEN \(notApplying)
            BEGIN
              \(logChange("delete", key: "OLD.\(pk)"))
            END
            """))
        guard readOnly else { return result }
        let message = literal(readOnlyMessage(partition: partition))
        for (suffix, event) in [("_ro_ins", "INSERT"), ("_ro_upd", "UPDATE"), ("_ro_del", "DELETE")] {
            result.append((prefix + suffix, """
                CREATE TRIGGER \(quote(prefix + suffix)) BEFORE \(event) ON \(t)
                WHEN \(isReadOnly) AND \(notApplying)
                BEGIN
                  SELECT RAISE(ABORT, \(message));
                END
                """))
        }
        return result
    }
}
