import GRDB
import GRDBSQLite
import TetherProtocol

/// Reads a ``HealViewReader``'s chunks: the backup opened read-only with the staging store
/// attached (``StoreRewriter/stagingSchema``), the unknown keys gathered once into a temporary
/// table of that connection (the log has no index: one scan), then keyset-paged SQL per stage
/// — unknown keys, then per table the view's rows no identical staged row matches, then the
/// staged rows the view lacks — each page read straight into the wire's encoding. Only the
/// position (stage and last key) is kept between chunks. Closes the files at the end.
package struct HealViewCursor: AsyncIteratorProtocol {
    package typealias Element = HealViewChunk
    package typealias Failure = StoreError

    private enum Stage: Equatable {
        case unknown
        /// The view's rows of table `n` that staging lacks or holds with another value.
        case rows(Int)
        /// Staging's rows of table `n` that the view lacks.
        case missing(Int)
        case done
    }

    private static let unknownTable = "temp.tether_heal_unknown"
    private static let updatedTable = "temp.tether_heal_updated"
    private static let pageSize = 256

    private let reader: HealViewReader
    private var queue: DatabaseQueue?
    private var stage = Stage.unknown
    /// The last (table, key) read in the current stage.
    private var last: (table: String, key: RowKey)?

    init(reader: HealViewReader) { self.reader = reader }

    package mutating func next() async throws(StoreError) -> HealViewChunk? {
        guard stage != .done else { return nil }
        do {
            let queue = try self.queue ?? open()
            self.queue = queue
            var chunk = ChunkBuilder(maxChanges: reader.maxChanges, maxBytes: reader.maxBytes)
            try queue.inDatabase { db in
                while !chunk.isFull, stage != .done { try readPage(db, into: &chunk) }
            }
            if stage == .done { close() }
            return chunk.count == 0 ? nil : chunk.build()
        } catch {
            close()
            stage = .done
            throw StoreError.wrap(error, path: reader.backupPath)
        }
    }

    private func open() throws -> DatabaseQueue {
        try NoFollow.refuseLinks(sqlite: reader.backupPath, place: .backup)
        try NoFollow.refuseLinks(sqlite: reader.stagingPath, place: .staging)
        let queue = try DatabaseQueue(path: reader.backupPath, configuration: PartitionStore.readOnlyConfiguration())
        do {
            try queue.inDatabase { db in
                // Attached with the connection's flags: read-only too.
                try db.execute(sql: "ATTACH DATABASE ? AS \(StoreSQL.quote(StoreRewriter.stagingSchema))", arguments: [reader.stagingPath])
                try db.execute(sql: Self.unknownKeysSQL(reader.schema, recovering: reader.recovering))
            }
        } catch {
            try? queue.close()  // cleanup: the error that matters is the one thrown
            throw error
        }
        return queue
    }

    private mutating func close() {
        try? queue?.close()  // cleanup: a read-only connection has nothing to lose
        queue = nil
    }

    /// Reads one page of the current stage into `chunk` (fewer rows when it fills), and moves
    /// to the next stage when the page shows the current one is exhausted.
    private mutating func readPage(_ db: Database, into chunk: inout ChunkBuilder) throws {
        let limit = min(Self.pageSize, chunk.room)
        let statement: Statement
        var table: TableSchema?
        switch stage {
        case .unknown:
            // A page after the last key read starts where the index has it (no `OR` that
            // would make SQLite scan from the start for every page).
            statement = try db.cachedStatement(sql: """
                SELECT tbl, pk FROM \(Self.unknownTable) \(last == nil ? "" : "WHERE (tbl, pk) > (?1, ?2)") ORDER BY tbl, pk LIMIT ?3
                """)
        case .rows(let index), .missing(let index):
            let schemaTable = reader.schema.tables[index]
            table = schemaTable
            let after = last != nil
            statement = try db.cachedStatement(
                sql: stage == .rows(index)
                    ? Self.rowsSQL(schemaTable, after: after, recovering: reader.recovering) : Self.missingSQL(schemaTable, after: after))
        case .done:
            return
        }
        let raw = statement.sqliteStatement
        sqlite3_reset(raw)
        defer {
            sqlite3_reset(raw)
            sqlite3_clear_bindings(raw)
        }
        if let last, stage == .unknown {
            try check(sqlite3_bind_text(raw, 1, last.table, -1, ChangeRowsWriter.transient), db)
            try check(last.key.bind(to: raw, at: 2), db)
        } else if let last, stage != .unknown {
            try check(last.key.bind(to: raw, at: 2), db)
        }
        if let table { try check(sqlite3_bind_text(raw, 1, table.name, -1, ChangeRowsWriter.transient), db) }
        try check(sqlite3_bind_int64(raw, 3, Int64(limit)), db)
        // A page that ends before the chunk is full and before its limit ends the stage; a
        // stage that ends exactly at a page's end is found out by the next, empty, page.
        var read = 0
        var exhausted = false
        while !chunk.isFull {
            let code = sqlite3_step(raw)
            if code == SQLITE_DONE {
                exhausted = read < limit
                break
            }
            if code != SQLITE_ROW { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage) }
            read += 1
            switch stage {
            case .unknown:
                let name = String(cString: sqlite3_column_text(raw, 0))
                let key = try Self.key(raw, column: 1, table: name, primaryKey: reader.schema.table(name)?.primaryKey ?? "pk")
                chunk.unknown(table: name, key: key)
                last = (name, key)
            case .rows:
                guard let table else { return }
                let key = try Self.key(raw, column: 0, table: table.name, primaryKey: table.primaryKey)
                chunk.insert(raw, table: table, key: key)
                last = (table.name, key)
            case .missing:
                guard let table else { return }
                let key = try Self.key(raw, column: 0, table: table.name, primaryKey: table.primaryKey)
                chunk.delete(table: table.name, key: key)
                last = (table.name, key)
            case .done:
                return
            }
        }
        if exhausted { advance() }
    }

    /// The next stage, from its start.
    private mutating func advance() {
        last = nil
        let tables = reader.schema.tables.count
        stage = switch stage {
        case .unknown: tables > 0 ? .rows(0) : .done
        case .rows(let index): .missing(index)
        case .missing(let index): index + 1 < tables ? .rows(index + 1) : .done
        case .done: .done
        }
    }

    /// Fills the temporary table of unknown keys: every key of `_tether_held`, and every key
    /// the log names — but when `recovering`, not a row whose first logged change is an update
    /// and that the store still holds (``HealViewReader``). The first change of each key comes
    /// from one grouped scan of the log (SQLite's `min()` picks the row its bare columns come from).
    /// When `recovering`, also fills `temp.tether_heal_updated`: the rows whose every logged
    /// change is an update, with the columns those updates changed (`,a,b,`), for ``rowsSQL``.
    static func unknownKeysSQL(_ schema: Schema, recovering: Bool) -> String {
        let tables = schema.tables.map { StoreSQL.literal($0.name) }.joined(separator: ", ")
        var sql = """
            CREATE TEMP TABLE tether_heal_unknown (tbl TEXT NOT NULL, pk NOT NULL, PRIMARY KEY (tbl, pk)) WITHOUT ROWID;
            INSERT OR IGNORE INTO \(unknownTable) (tbl, pk) SELECT tbl, pk FROM main._tether_held WHERE tbl IN (\(tables));

            """
        guard recovering else {
            return sql + "INSERT OR IGNORE INTO \(unknownTable) (tbl, pk) SELECT tbl, pk FROM main._tether_log WHERE tbl IN (\(tables));"
        }
        sql += """
            CREATE TEMP TABLE tether_heal_first (tbl TEXT NOT NULL, pk NOT NULL, kind TEXT NOT NULL, PRIMARY KEY (tbl, pk)) WITHOUT ROWID;
            INSERT INTO temp.tether_heal_first (tbl, pk, kind)
              SELECT tbl, pk, kind FROM (SELECT tbl, pk, kind, min(seq) FROM main._tether_log WHERE tbl IN (\(tables)) GROUP BY tbl, pk);
            INSERT OR IGNORE INTO \(unknownTable) (tbl, pk) SELECT tbl, pk FROM temp.tether_heal_first WHERE kind <> 'update';
            CREATE TEMP TABLE tether_heal_updated (tbl TEXT NOT NULL, pk NOT NULL, cols TEXT NOT NULL, PRIMARY KEY (tbl, pk)) WITHOUT ROWID;
            INSERT INTO \(updatedTable) (tbl, pk, cols)
              SELECT tbl, pk, ',' || group_concat(coalesce(cols, ''), ',') || ',' FROM main._tether_log WHERE tbl IN (\(tables))
              GROUP BY tbl, pk HAVING sum(kind <> 'update') = 0;

            """
        for table in schema.tables {
            let t = StoreSQL.quote(table.name), pk = StoreSQL.quote(table.primaryKey)
            sql += """
                INSERT OR IGNORE INTO \(unknownTable) (tbl, pk) SELECT f.tbl, f.pk FROM temp.tether_heal_first AS f
                  WHERE f.tbl = \(StoreSQL.literal(table.name)) AND f.kind = 'update'
                    AND NOT EXISTS (SELECT 1 FROM main.\(t) AS r WHERE r.\(pk) = f.pk);

                """
        }
        return sql + "DROP TABLE temp.tether_heal_first;"
    }

    /// The view's rows (not unknown) that no staged row equals in every column: the key, then
    /// the value columns in schema order. `?1` the table's name, `?2` the last key read (when
    /// `after`), `?3` the page size.
    ///
    /// When `recovering`, a row the device only updated is left out too when the staged row
    /// equals it in every column those updates did not change: the view vouches for nothing
    /// the server lacks there, and the changed columns reach the server as the recovery's
    /// replay, which wins over a healed value anyway. (Sent, such rows made a reset's heal
    /// upload every unsynced update a second time: 10,000 rows at 1M, BENCHMARKS.md issue 50.)
    static func rowsSQL(_ table: TableSchema, after: Bool, recovering: Bool = false) -> String {
        let t = StoreSQL.quote(table.name), pk = StoreSQL.quote(table.primaryKey)
        let s = StoreSQL.quote(StoreRewriter.stagingSchema)
        let values = table.valueColumns.map { StoreSQL.quote($0.name) }
        let same = (["s.\(pk) = v.\(pk)"] + values.map { "s.\($0) IS v.\($0)" }).joined(separator: " AND ")
        let sameUnchanged = (["w.tbl = ?1", "w.pk = v.\(pk)", "s.\(pk) = v.\(pk)"] + table.valueColumns.map { column in
            let c = StoreSQL.quote(column.name)
            return "(instr(w.cols, \(StoreSQL.literal(",\(column.name),"))) > 0 OR s.\(c) IS v.\(c))"
        }).joined(separator: " AND ")
        let onlyUpdated = recovering
            ? "\n  AND NOT EXISTS (SELECT 1 FROM \(updatedTable) AS w, \(s).\(t) AS s WHERE \(sameUnchanged))" : ""
        return """
            SELECT \(([pk] + values).map { "v.\($0)" }.joined(separator: ", ")) FROM main.\(t) AS v
            WHERE \(after ? "v.\(pk) > ?2" : "true")
              AND NOT EXISTS (SELECT 1 FROM \(unknownTable) AS u WHERE u.tbl = ?1 AND u.pk = v.\(pk))
              AND NOT EXISTS (SELECT 1 FROM \(s).\(t) AS s WHERE \(same))\(onlyUpdated)
            ORDER BY v.\(pk) LIMIT ?3
            """
    }

    /// The staged rows (not unknown) the view does not have: their keys. Parameters as ``rowsSQL(_:)``.
    static func missingSQL(_ table: TableSchema, after: Bool) -> String {
        let t = StoreSQL.quote(table.name), pk = StoreSQL.quote(table.primaryKey)
        let s = StoreSQL.quote(StoreRewriter.stagingSchema)
        return """
            SELECT s.\(pk) FROM \(s).\(t) AS s
            WHERE \(after ? "s.\(pk) > ?2" : "true")
              AND NOT EXISTS (SELECT 1 FROM \(unknownTable) AS u WHERE u.tbl = ?1 AND u.pk = s.\(pk))
              AND NOT EXISTS (SELECT 1 FROM main.\(t) AS v WHERE v.\(pk) = s.\(pk))
            ORDER BY s.\(pk) LIMIT ?3
            """
    }

    private static func key(_ statement: SQLiteStatement, column: Int32, table: String, primaryKey: String) throws(StoreError) -> RowKey {
        guard let key = RowKey(statement, column: column) else {
            throw .typeMismatch(table: table, column: primaryKey, expected: "integer or text key", found: "another type")
        }
        return key
    }

    private func check(_ code: Int32, _ db: Database) throws {
        guard code != SQLITE_OK else { return }
        throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage)
    }
}

/// The chunk being read: unknown keys and rows in their wire form, and how full it is.
private struct ChunkBuilder {
    let maxChanges: Int
    let maxBytes: Int
    private var unknownKeys = ChangeRowsBuilder(capacity: 16 << 10)
    private var rows = ChangeRowsBuilder()
    /// The values of the rows read, each written once before it is copied into ``rows``.
    private var values = ValueWriter()
    /// The column dictionary indices of the last table an insert was read from.
    private var columns: (table: String, indices: [Int])?

    init(maxChanges: Int, maxBytes: Int) {
        self.maxChanges = maxChanges
        self.maxBytes = maxBytes
    }

    var count: Int { unknownKeys.count + rows.count }
    var room: Int { max(0, maxChanges - count) }
    var isFull: Bool { count >= maxChanges || unknownKeys.byteCount + rows.byteCount >= maxBytes }

    mutating func unknown(table: String, key: RowKey) {
        unknownKeys.change(.delete, table: unknownKeys.table(table), key: key, fieldCount: 0)
    }

    mutating func delete(table: String, key: RowKey) {
        rows.change(.delete, table: rows.table(table), key: key, fieldCount: 0)
    }

    /// An insert of the row `statement` is on (key in column 0, then the value columns in
    /// schema order), every column carried.
    mutating func insert(_ statement: SQLiteStatement, table: TableSchema, key: RowKey) {
        let tableIndex = rows.table(table.name)
        if columns?.table != table.name { columns = (table.name, table.valueColumns.map { rows.column($0.name) }) }
        let indices = columns?.indices ?? []
        rows.change(.insert, table: tableIndex, key: key, fieldCount: indices.count)
        for (position, column) in indices.enumerated() {
            let start = values.count
            values.column(statement, Int32(position + 1))
            rows.field(column, encoded: values[start..<values.count])
        }
    }

    func build() -> HealViewChunk { HealViewChunk(unknown: unknownKeys.build(), rows: rows.build()) }
}
