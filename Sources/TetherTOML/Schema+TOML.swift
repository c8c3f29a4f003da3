import TetherProtocol

extension Schema {
    /// Parses and validates a `schema.toml` (docs/contract.md: Server). Every problem names the table and column.
    ///
    /// ```toml
    /// version = 1
    /// [tables.orders]
    /// primary_key = "id"
    /// [tables.orders.columns]
    /// id = "text"
    /// note = "text?"
    /// ```
    package static func parse(toml text: String, file: String) throws(ConfigError) -> Schema {
        let parser = try ConfigParser(text: text, file: file)
        let version = parser.root.integer("version", required: true, range: 1...Int(Int32.max)) ?? 1
        var tables: [TableSchema] = []
        if let tablesTable = parser.root.table("tables", required: true) {
            for name in tablesTable.keys {
                guard let table = tablesTable.table(name) else { continue }
                let primaryKey = table.string("primary_key", required: true) ?? ""
                var columns: [ColumnSchema] = []
                if let columnTable = table.table("columns", required: true) {
                    for column in columnTable.keys {
                        guard let spelling = columnTable.string(column) else { continue }
                        if let parsed = ColumnSchema(name: column, spelling: spelling) {
                            columns.append(parsed)
                        } else {
                            let valid = ColumnType.allCases.map(\.rawValue).joined(separator: ", ")
                            columnTable.problem(column, "unknown type \(spelling.debugDescription); expected one of \(valid), optionally followed by ?")
                        }
                    }
                }
                tables.append(TableSchema(name: name, primaryKey: primaryKey, columns: columns))
            }
        }
        let schema = Schema(version: version, tables: tables)
        for problem in schema.problems() {
            // problems() names `tables.x.y: …`; split the key off to get its line.
            let key = problem.prefix { $0 != ":" }
            parser.problem(String(key), String(problem.dropFirst(key.count + 2)))
        }
        try parser.finish()
        return schema
    }
}
