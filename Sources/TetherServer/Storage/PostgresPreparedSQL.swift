import Logging
import PostgresNIO

/// A statement the hot paths run (a bind, an upload, a state download), prepared by name once
/// per connection and executed by that name afterwards: PostgreSQL parses and plans it once
/// per connection, not once per use (issue 50). The rest of the storage sends its statements
/// unnamed, parsed per use.
///
/// The SQL names its result columns (never `*`): a migration that adds a column leaves the
/// statements prepared on other instances' connections valid. A pooler in front of PostgreSQL
/// must keep named statements (PgBouncer ≥ 1.21 with `max_prepared_statements`, or session
/// pooling); docs/server.md "PostgreSQL".
package protocol PostgresPreparedSQL {
    /// The statement's name on the connection: unique among these, at most 63 bytes
    /// (PostgreSQL's `NAMEDATALEN`), prefixed `tether_`.
    static var name: String { get }
    /// The statement, with `$1`, `$2`, … for its values.
    static var sql: String { get }
}

/// postgres-nio's prepared statement for one ``PostgresPreparedSQL``, its values bound.
struct PreparedStatement<SQL: PostgresPreparedSQL>: PostgresPreparedStatement {
    static var name: String { SQL.name }
    static var sql: String { SQL.sql }
    typealias Row = PostgresRow

    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}

extension PostgresConnection {
    /// Runs `sql`, prepared on this connection at its first use, with `values` for `$1`, `$2`, …
    /// (``guardedQuery(_:logger:file:line:)`` for the unnamed rest).
    func guardedExecute<SQL: PostgresPreparedSQL, each Value: PostgresDynamicTypeEncodable>(
        _ sql: SQL.Type, _ values: repeat each Value, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, PostgresRow> {
        try refuseWhenClosed()
        var bindings = PostgresBindings()
        for value in repeat each values { bindings.append(value) }
        return try await execute(PreparedStatement<SQL>(bindings: bindings), logger: logger, file: file, line: line)
    }

    /// Runs `sql`, a statement without rows (an insert, an update, a delete), to its end.
    func guardedRun<SQL: PostgresPreparedSQL, each Value: PostgresDynamicTypeEncodable>(
        _ sql: SQL.Type, _ values: repeat each Value, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws {
        for try await _ in try await guardedExecute(sql, repeat each values, logger: logger, file: file, line: line) {}
    }
}
