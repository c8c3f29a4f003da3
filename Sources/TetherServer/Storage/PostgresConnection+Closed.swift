import Logging
import PostgresNIO

extension PostgresConnection {
    /// Runs `query`, refusing at once when the server has already closed the connection.
    ///
    /// PostgresNIO 1.33 loses a query written to a connection whose channel is already closed
    /// and torn down: its result never arrives and the caller waits for ever. That is what
    /// happens to an instance that was stalled (frozen, swapped out, suspended) inside a
    /// transaction when PostgreSQL ended the transaction meanwhile
    /// (`idle_in_transaction_session_timeout`): its next statement — often the `ROLLBACK` after a
    /// failure — would hang the upload, the admin command or the download that ran it. Every
    /// statement Tether sends goes through here.
    @discardableResult
    func guardedQuery(
        _ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws -> PostgresRowSequence {
        try refuseWhenClosed()
        return try await self.query(query, logger: logger, file: file, line: line)
    }

    /// Throws when the server has already closed the connection (``guardedQuery(_:logger:file:line:)``).
    func refuseWhenClosed() throws {
        guard !isClosed else {
            throw StorageError.unavailable("the connection to PostgreSQL was closed (the server ended it or went away)")
        }
    }
}
