import GRDB
import TetherProtocol

/// A deterministic text of a store's user tables, used to compare stores (tests, tools):
/// tables in name order, each as a `[table]` line followed by one line per row in primary-key
/// order, `key | column=value | …` with columns in name order. Values are typed: `null`,
/// `i:42`, `r:0.1` (shortest text that reads back to the same Double), `t:"…"` (escaped),
/// `b:0aff` (hex). Two stores hold the same data exactly when their dumps are equal.
///
/// The dump holds row contents: it is for tests and explicit operator commands, never for logs.
package enum CanonicalDump {
    package static func format(_ value: FieldValue) -> String {
        switch value {
        case .null: "null"
        case .integer(let v): "i:\(v)"
        case .real(let v): "r:\(v)"
        case .text(let v): "t:" + quoted(v)
        case .blob(let v): "b:" + hex(v)
        }
    }

    package static func format(_ key: RowKey) -> String { format(key.fieldValue) }

    /// One row's line: the key, then every value column of `table` in name order.
    package static func line(key: RowKey, fields: [String: FieldValue], table: TableSchema) -> String {
        var parts = [format(key)]
        for column in table.valueColumns {
            parts.append("\(column.name)=\(format(fields[column.name] ?? .null))")
        }
        return parts.joined(separator: " | ")
    }

    package static func header(_ table: TableSchema) -> String { "[\(table.name)]" }

    /// The dump of a state given as rows (e.g. a test's model of the server), for comparison
    /// with `PartitionStore.canonicalDump()`.
    package static func dump(schema: Schema, rows: [String: [RowKey: [String: FieldValue]]]) -> String {
        var out = ""
        for table in schema.tables {
            out += header(table) + "\n"
            for (key, fields) in (rows[table.name] ?? [:]).sorted(by: { $0.key < $1.key }) {
                var normalized: [String: FieldValue] = [:]
                for (name, value) in fields { normalized[name] = value.normalized(for: table.column(name)?.type ?? .blob) }
                out += line(key: key, fields: normalized, table: table) + "\n"
            }
        }
        return out
    }

    /// Dumps the user tables of `schema` from `db`, reading one row at a time.
    static func dump(_ db: Database, schema: Schema) throws -> String {
        var out = ""
        for table in schema.tables {
            out += header(table) + "\n"
            let rows = try Row.fetchCursor(
                db, sql: "SELECT * FROM \(StoreSQL.quote(table.name)) ORDER BY \(StoreSQL.quote(table.primaryKey))")
            while let row = try rows.next() {
                let keyValue = FieldValue(row[table.primaryKey] as DatabaseValue? ?? .null)
                let key = RowKey(keyValue).map(format) ?? format(keyValue)
                out += ([key] + table.valueColumns.map {
                    "\($0.name)=\(format(FieldValue(row[$0.name] as DatabaseValue? ?? .null)))"
                }).joined(separator: " | ") + "\n"
            }
        }
        return out
    }

    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var out = ""
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return out
    }
}

extension PartitionStore {
    /// The canonical dump of the store's user tables (see `CanonicalDump`), from one snapshot.
    package func canonicalDump() async throws(StoreError) -> String {
        let schema = self.schema
        return try await read { db in try CanonicalDump.dump(db, schema: schema) }
    }

    /// The canonical dump of the Tether store file at `path` (e.g. a backup), using the schema
    /// recorded in it. The file is opened read-only.
    package static func canonicalDump(ofStoreAt path: String) throws(StoreError) -> String {
        try readStoreFile(at: path) { db in try CanonicalDump.dump(db, schema: MetaTable.recordedSchema(db, path: path)) }
    }
}
