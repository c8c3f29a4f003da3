import Foundation

/// The ledger's page, count and selection queries (docs/server.md, "Device ledger") as SQL
/// for both storages, built in one place so that a filter and an order mean the same on
/// SQLite and PostgreSQL. Pure: a statement's text and its values, in order; each storage
/// binds them its way (`?` on SQLite, `$n` with a type on PostgreSQL).
package struct DeviceLedgerSQL: Sendable {
    package enum Dialect: Sendable, Hashable { case sqlite, postgres }

    /// A value of a statement.
    package enum Bind: Sendable, Hashable {
        case text(String)
        case real(Double)
        case integer(Int64)
    }

    package let dialect: Dialect
    package private(set) var binds: [Bind] = []

    package init(_ dialect: Dialect) { self.dialect = dialect }

    /// The columns an entry is read from, in ``DeviceLedgerEntry`` order of the storages' readers.
    package static let columns = """
        device_id, partition, device_name, user_name, release, state, server_version, client_file, unsynced, \
        unsynced_since, last_upload_at, last_error_code, last_error_at, resets, pending_reset, reported_at
        """

    /// Adds `value` and returns its placeholder.
    package mutating func bind(_ value: Bind) -> String {
        binds.append(value)
        switch dialect {
        case .sqlite: return "?"
        case .postgres:
            let type =
                switch value {
                case .text: "text"
                case .real: "double precision"
                case .integer: "bigint"
                }
            return "$\(binds.count)::\(type)"
        }
    }

    // MARK: Statements

    /// One page: `limit + 1` entries (the extra one says whether another page follows).
    package static func page(
        _ query: DeviceLedgerPageQuery, staleBefore: Date, wedgedBefore: Date, dialect: Dialect
    ) -> DeviceLedgerSQL {
        var sql = DeviceLedgerSQL(dialect)
        var conditions = sql.conditions(query.filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore, storedHealth: true)
        let keys = query.sort.keys
        if let cursor = query.cursor {
            let columns = keys.map { sql.column($0, staleBefore: staleBefore, wedgedBefore: wedgedBefore) }
            let values = keys.map { sql.bind(Self.value($0, of: cursor)) }
            conditions.append("(\(columns.joined(separator: ", "))) \(query.descending ? "<" : ">") (\(values.joined(separator: ", ")))")
        }
        let order = keys.map { sql.column($0, staleBefore: staleBefore, wedgedBefore: wedgedBefore) + (query.descending ? " DESC" : " ASC") }
        let limit = sql.bind(.integer(Int64(max(0, query.limit)) + 1))
        guard query.cursor == nil && query.offset > 0 else {
            sql.text = """
                SELECT \(columns) FROM device_reports WHERE \(Self.and(conditions))
                ORDER BY \(order.joined(separator: ", ")) LIMIT \(limit)
                """
            return sql
        }
        // A page by offset skips the entries before it by their keys alone (in the order's
        // index, which holds the entry's key), and reads only its own entries whole.
        let offset = sql.bind(.integer(Int64(query.offset)))
        let columns = Self.columns.split(separator: ",").map { "r." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        sql.text = """
            SELECT \(columns.joined(separator: ", ")) FROM device_reports AS r JOIN (
                SELECT user_name, device_id, partition FROM device_reports WHERE \(Self.and(conditions))
                ORDER BY \(order.joined(separator: ", ")) LIMIT \(limit) OFFSET \(offset)
            ) AS k ON r.user_name = k.user_name AND r.device_id = k.device_id AND r.partition = k.partition
            ORDER BY \(order.map { "r." + $0 }.joined(separator: ", "))
            """
        return sql
    }

    /// Entries by (state, health class) over `filter`, with how many are stale and erroring:
    /// rows of (state, class, entries, stale, erroring).
    package static func counts(_ filter: DeviceLedgerFilter, staleBefore: Date, wedgedBefore: Date, dialect: Dialect) -> DeviceLedgerSQL {
        var sql = DeviceLedgerSQL(dialect)
        let health = sql.health(staleBefore: staleBefore, wedgedBefore: wedgedBefore)
        let stale = sql.bind(.real(staleBefore.timeIntervalSince1970))
        let erroring = sql.erroring(staleBefore: staleBefore)
        let conditions = sql.conditions(filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
        sql.text = """
            SELECT state, \(health) AS health, count(*) AS entries,
                sum(CASE WHEN reported_at < \(stale) THEN 1 ELSE 0 END) AS stale,
                sum(CASE WHEN \(erroring) THEN 1 ELSE 0 END) AS erroring
            FROM device_reports WHERE \(Self.and(conditions)) GROUP BY 1, 2
            """
        return sql
    }

    /// The keys of the entries matching `filter`, in key order, at most `limit`.
    package static func keys(_ filter: DeviceLedgerFilter, staleBefore: Date, wedgedBefore: Date, limit: Int, dialect: Dialect) -> DeviceLedgerSQL {
        var sql = DeviceLedgerSQL(dialect)
        let conditions = sql.conditions(filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
        let limit = sql.bind(.integer(Int64(max(0, limit))))
        sql.text = """
            SELECT user_name, device_id, partition, device_name FROM device_reports WHERE \(Self.and(conditions))
            ORDER BY user_name, device_id, partition LIMIT \(limit)
            """
        return sql
    }

    /// How many devices (user and device id) have an entry matching `filter`.
    package static func deviceCount(_ filter: DeviceLedgerFilter, staleBefore: Date, wedgedBefore: Date, dialect: Dialect) -> DeviceLedgerSQL {
        var sql = DeviceLedgerSQL(dialect)
        let conditions = sql.conditions(filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
        sql.text = """
            SELECT count(*) FROM (SELECT DISTINCT user_name, device_id FROM device_reports WHERE \(Self.and(conditions))) AS matching
            """
        return sql
    }

    /// The statement's text, once built.
    package internal(set) var text = ""

    // MARK: Pieces

    /// The conditions of `filter`, each a parenthesised SQL condition.
    /// `storedHealth`: the classes `unhealthy` and `wedged` by the stored class (a page's
    /// query, run once the classes are for its cutoffs: ``DeviceLedgerPageQuery/readsStoredHealth``).
    package mutating func conditions(_ filter: DeviceLedgerFilter, staleBefore: Date, wedgedBefore: Date, storedHealth: Bool = false) -> [String] {
        var conditions: [String] = []
        if let partition = filter.partition {
            if DeviceLedgerFilter.isGlob(partition) {
                let condition =
                    switch dialect {
                    case .sqlite: "partition GLOB \(bind(.text(DeviceLedgerFilter.sqliteGlob(partition))))"
                    case .postgres: "partition LIKE \(bind(.text(DeviceLedgerFilter.postgresLike(partition)))) ESCAPE '\\'"
                    }
                conditions.append(condition)
            } else {
                conditions.append("partition = \(bind(.text(partition)))")
            }
        }
        if let state = filter.state {
            switch state {
            case DeviceLedgerHealth.unhealthyName where storedHealth:
                conditions.append("health < \(DeviceLedgerHealth.healthy.rawValue)")
            case DeviceLedgerHealth.unhealthyName:
                conditions.append("\(health(staleBefore: staleBefore, wedgedBefore: wedgedBefore)) < \(DeviceLedgerHealth.healthy.rawValue)")
            case DeviceLedgerHealth.wedged.name where storedHealth: conditions.append("health = \(DeviceLedgerHealth.wedged.rawValue)")
            case DeviceLedgerHealth.wedged.name: conditions.append(wedged(wedgedBefore))
            case DeviceLedgerHealth.erroring.name: conditions.append(erroring(staleBefore: staleBefore))
            case DeviceLedgerHealth.stale.name: conditions.append("reported_at < \(bind(.real(staleBefore.timeIntervalSince1970)))")
            default: conditions.append("state = \(bind(.text(state)))")
            }
        }
        if let before = filter.reportedBefore { conditions.append("reported_at < \(bind(.real(before.timeIntervalSince1970)))") }
        if let id = filter.deviceID { conditions.append("device_id = \(bind(.text(id)))") }
        if let user = filter.user { conditions.append("user_name = \(bind(.text(user)))") }
        if let text = filter.text, !text.isEmpty {
            let needle = DeviceLedgerFilter.asciiLowercased(text)
            switch dialect {
            case .sqlite:
                let name = bind(.text(needle))
                let id = bind(.text(needle))
                conditions.append("(instr(lower(device_name), \(name)) > 0 OR instr(lower(device_id), \(id)) > 0)")
            case .postgres:
                // A substring as LIKE '%…%' over the lowered columns: what the trigram indexes
                // of migration 10 serve (without them, the same scan as strpos).
                let pattern = "%" + Self.likeEscaped(needle) + "%"
                let name = bind(.text(pattern))
                let id = bind(.text(pattern))
                conditions.append(
                    "(\(Self.postgresLower("device_name")) LIKE \(name) ESCAPE '\\' OR \(Self.postgresLower("device_id")) LIKE \(id) ESCAPE '\\')")
            }
        }
        return conditions
    }

    /// ``DeviceLedgerHealth`` of a row as SQL: 0 wedged … 4 healthy.
    package mutating func health(staleBefore: Date, wedgedBefore: Date) -> String {
        let wedged = wedged(wedgedBefore)
        let erroring = erroring(staleBefore: staleBefore)
        let stale = bind(.real(staleBefore.timeIntervalSince1970))
        return """
            (CASE WHEN \(wedged) THEN 0 WHEN state = 'reset-pending' THEN 1 WHEN \(erroring) THEN 2 \
            WHEN reported_at < \(stale) THEN 3 ELSE 4 END)
            """
    }

    /// ``DeviceLedgerEntry/isWedged(before:)`` as SQL.
    package mutating func wedged(_ cutoff: Date) -> String {
        let first = bind(.real(cutoff.timeIntervalSince1970))
        let second = bind(.real(cutoff.timeIntervalSince1970))
        return "(unsynced > 0 AND unsynced_since IS NOT NULL AND unsynced_since < \(first) AND coalesce(last_upload_at, 0) < \(second))"
    }

    /// ``DeviceLedgerHealth/isErroring(_:staleBefore:)`` as SQL.
    package mutating func erroring(staleBefore: Date) -> String {
        "(last_error_at IS NOT NULL AND last_error_at > coalesce(last_upload_at, 0) AND last_error_at >= \(bind(.real(staleBefore.timeIntervalSince1970))))"
    }

    /// The column (or expression) of a sort key.
    package mutating func column(_ key: DeviceLedgerSortKey, staleBefore: Date, wedgedBefore: Date) -> String {
        switch key {
        // The stored class (``DeviceLedgerHealthColumn``), for these cutoffs once refreshed.
        case .health: "health"
        case .reportedAt: "reported_at"
        case .deviceName: "device_name"
        case .user: "user_name"
        case .deviceID: "device_id"
        case .partition: "partition"
        case .state: "state"
        case .unsynced: "unsynced"
        }
    }

    /// A cursor's value of a sort key.
    package static func value(_ key: DeviceLedgerSortKey, of cursor: DeviceLedgerCursor) -> Bind {
        switch key {
        case .health: .integer(Int64(cursor.health))
        case .reportedAt: .real(cursor.reportedAt)
        case .deviceName: .text(cursor.deviceName)
        case .user: .text(cursor.user)
        case .deviceID: .text(cursor.deviceID)
        case .partition: .text(cursor.partition)
        case .state: .text(cursor.state)
        case .unsynced: .integer(cursor.unsynced)
        }
    }

    static func and(_ conditions: [String]) -> String {
        conditions.isEmpty ? "1 = 1" : conditions.joined(separator: " AND ")
    }

    /// `text` matching itself in a PostgreSQL `LIKE … ESCAPE '\'`.
    static func likeEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if character == "\\" || character == "%" || character == "_" { out.append("\\") }
            out.append(character)
        }
        return out
    }

    /// ASCII letters lowered, as SQLite's `lower()` does (PostgreSQL's lowers every script).
    static func postgresLower(_ column: String) -> String {
        "translate(\(column), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
    }
}
