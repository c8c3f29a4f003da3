import TetherProtocol

extension SyncService {
    /// 227 (`bad_query`) when `scope` filters a table no queryable column serves and that table
    /// holds more than `[subscriptions] max_unindexed_rows` rows in `partition`: the server would
    /// read and evaluate each of them for every download of the store. nil: the scope is served.
    func unindexedRefusal(_ scope: SubscriptionScope, partition: PartitionName) async throws -> SyncError? {
        guard !scope.isWhole else { return nil }
        let tables = try await storage.history.unindexedTables(of: scope, in: partition, over: maxUnindexedRows)
        guard !tables.isEmpty else { return nil }
        let names = tables.joined(separator: ", ")
        return SyncError(
            .badQuery,
            "a subscription is too costly to serve: no queryable column serves its filter on \(names), which holds more than \(maxUnindexedRows) rows (the most the server evaluates row by row)",
            hint: "add a column the filter compares (=, IN, <, >, BETWEEN) to [subscriptions] queryable on the server and restart it, or raise max_unindexed_rows; nothing was applied")
    }
}
