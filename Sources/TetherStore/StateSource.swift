import GRDB
import TetherProtocol

/// A pull iterator over a full state: rows sorted by table name, then strictly by primary key
/// (integers before text, text by UTF-8 bytes: SQLite's order). The rewrite consumes it inside
/// one SQLite write transaction, which is synchronous: a state arriving over the network is
/// staged first (e.g. into a store file read with `StoreStateSource`) or fed by a producer
/// that blocks this pull, never by awaiting. Memory stays bounded by what the source buffers.
package protocol StateSource: Sendable {
    /// The next row, or nil at the end.
    mutating func next() throws(StoreError) -> StateRow?
    /// The SQLite file holding the state, when it is one: the rewrite then runs as SQL over
    /// it attached (``StoreRewriter``), without reading its rows through ``next()``.
    var databasePath: String? { get }
}

extension StateSource {
    package var databasePath: String? { nil }
}

/// A state held in memory (tests, small partitions). Sorts its rows.
package struct ArrayStateSource: StateSource {
    private var rows: [StateRow]
    private var index = 0

    package init(_ rows: [StateRow]) {
        self.rows = rows.sorted { ($0.table, $0.key) < ($1.table, $1.key) }
    }

    package mutating func next() throws(StoreError) -> StateRow? {
        guard index < rows.count else { return nil }
        defer { index += 1 }
        return rows[index]
    }
}

/// The state held in another store file (a staging store the server's state was downloaded
/// into, or a backup), read a page at a time in key order. Tables absent from the file are
/// read as empty.
package struct StoreStateSource: StateSource {
    private let queue: DatabaseQueue
    private let path: String
    private let tables: [TableSchema]
    private let pageSize: Int
    private var tableIndex = 0
    private var lastKey: RowKey?
    private var page: [StateRow] = []
    private var pageIndex = 0
    private var tableDone = false

    package var databasePath: String? { path }

    /// Reads the tables of `schema` from the store file at `path` (`place`: what it is, for a
    /// refused symbolic link's error).
    package init(path: String, schema: Schema, pageSize: Int = 256, place: StoreFilePlace = .staging) throws(StoreError) {
        try NoFollow.refuseLinks(sqlite: path, place: place)
        do {
            var config = Configuration()
            config.busyMode = .timeout(PartitionStore.busyTimeout)
            queue = try DatabaseQueue(path: path, configuration: config)
        } catch {
            throw StoreError.wrap(error, path: path)
        }
        self.path = path
        self.pageSize = max(pageSize, 1)
        self.tables = schema.tables
    }

    package mutating func next() throws(StoreError) -> StateRow? {
        while tableIndex < tables.count {
            if pageIndex < page.count {
                defer { pageIndex += 1 }
                return page[pageIndex]
            }
            if tableDone {
                tableIndex += 1
                lastKey = nil
                tableDone = false
                page = []
                pageIndex = 0
                continue
            }
            try fetchPage(tables[tableIndex])
        }
        return nil
    }

    private mutating func fetchPage(_ table: TableSchema) throws(StoreError) {
        let t = StoreSQL.quote(table.name), pk = StoreSQL.quote(table.primaryKey)
        let after = lastKey
        let limit = pageSize
        do {
            page = try queue.read { db -> [StateRow] in
                guard try db.tableExists(table.name) else { return [] }
                let rows: [Row]
                if let after {
                    rows = try Row.fetchAll(
                        db, sql: "SELECT * FROM \(t) WHERE \(pk) > ? ORDER BY \(pk) LIMIT ?",
                        arguments: [after.databaseValue, limit])
                } else {
                    rows = try Row.fetchAll(db, sql: "SELECT * FROM \(t) ORDER BY \(pk) LIMIT ?", arguments: [limit])
                }
                return try rows.map { row in
                    guard let key = RowKey(row[table.primaryKey] as DatabaseValue? ?? .null) else {
                        throw StoreError.typeMismatch(
                            table: table.name, column: table.primaryKey,
                            expected: table.primaryKeyColumn?.typeSpelling ?? "key", found: "another type")
                    }
                    return StateRow(table: table.name, key: key, fields: RowWriter.fields(of: row, table))
                }
            }
        } catch {
            throw StoreError.wrap(error, path: path)
        }
        pageIndex = 0
        tableDone = page.count < limit
        lastKey = page.last?.key ?? lastKey
    }
}
