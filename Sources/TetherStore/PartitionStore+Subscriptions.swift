import GRDB
import TetherProtocol

extension PartitionStore {
    /// The subscriptions the store's rows are of, as the store records them (nil: the whole
    /// partition, and every store that never had subscriptions).
    package func heldSubscriptions() async throws(StoreError) -> SubscriptionSet? {
        try await metadata().subscriptions
    }

    /// Records `set` as the subscriptions the store's rows are of, alone (a bootstrap whose
    /// state was rewritten into an existing store; ``completeState(serverVersion:clientFile:subscriptions:)``
    /// records it with the state for a new one).
    package func recordSubscriptions(_ set: SubscriptionSet?) async throws(StoreError) {
        try await write { db in try MetaTable.setSubscriptions(db, set) }
    }

    /// Applies one chunk of a subscription change (protocol 9): its inserts (rows entering, each
    /// the whole row) and deletes (rows leaving: the store's copy removed), in one transaction
    /// with the apply flag set, so nothing is captured as a local change, by the same rules as a
    /// download (``apply(_:)``: a row with pending local changes keeps them — an insert of a row
    /// with a pending local insert or delete is skipped, fields with pending local updates keep
    /// their local values, a pending local update of a row leaving is held for its upload). The
    /// store's server version does not move. On the last chunk the store records `finalSet` and
    /// the chunk's scope token in the same transaction: until then it still records the set it held, so a change cut short
    /// is done again from the next bind, and a chunk applied twice writes the same rows again.
    ///
    /// `finalSet` is the set the device asked for (nil: the whole partition); a chunk whose
    /// ``SubscriptionChunk/setDigest`` is not that set's (``SubscriptionSet/digest(of:)``) is
    /// refused with ``StoreError/subscriptionMismatch(path:expected:found:)`` and nothing of it
    /// is written.
    @discardableResult
    package func applySubscriptionChunk(_ chunk: SubscriptionChunk, finalSet: SubscriptionSet?) async throws(StoreError) -> ApplyReport {
        let schema = self.schema
        let path = self.path
        let expected = SubscriptionSet.digest(of: finalSet)
        guard chunk.setDigest == expected else {
            throw .subscriptionMismatch(path: path, expected: SubscriptionSet.digestText(of: finalSet), found: Self.hex(chunk.setDigest))
        }
        return try await write { db in
            guard let meta = try MetaTable.fetch(db) else { throw StoreError.notAStore(path: path) }
            var report = ApplyReport()
            report.serverVersion = meta.serverVersion
            try MetaTable.withApplyFlag(db) {
                let rows = chunk.changes
                if !rows.isEmpty {
                    let weighPending = try ChangeLog.hasPending(db)
                    if weighPending { try ChangeLog.syncRowIndex(db) }
                    var writer = ChangeRowsWriter(db: db, schema: schema, inserts: .wholeRows)
                    var upserts = WholeRowUpserts()
                    let perTable = try Self.applyChanges(
                        rows, db: db, schema: schema, writer: &writer, upserts: &upserts, weighPending: weighPending,
                        integrated: meta.integratedSeq, report: &report)
                    for (index, count) in perTable.enumerated() where count > 0 { report.changesPerTable[rows.tables[index], default: 0] += count }
                }
                if chunk.isLast { try MetaTable.setSubscriptions(db, finalSet, token: chunk.scopeToken) }
            }
            return report
        }
    }

    /// A digest as 16 hex digits (``SubscriptionSet/digestText``'s form).
    static func hex(_ digest: UInt64) -> String {
        let text = String(digest, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }
}
