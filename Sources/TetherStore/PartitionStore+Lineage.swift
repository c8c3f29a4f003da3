import GRDB
import TetherProtocol

extension PartitionStore {
    /// What the store says of its own history at a bind whose uploads go under `uploadSalt`
    /// (``StoreLineage``): its acknowledged seq, the last seq it gave a change, and the
    /// uploads it recorded that the server has not acknowledged.
    package func lineage(uploadSalt: Int64) async throws(StoreError) -> StoreLineage {
        try await read { db in
            StoreLineage(
                uploadSalt: uploadSalt, integratedSeq: try MetaTable.fetch(db)?.integratedSeq ?? 0,
                lastSeq: try ChangeLog.lastAssignedSeq(db), sent: try UploadRecords.all(db))
        }
    }

    /// Records, durably (`synchronous = FULL`), that the session with `salt` may send the seqs
    /// from `firstSeq` through `lastSeq`, before it sends them: a store that shows the record
    /// at its next bind proves the server's integration of them is its own. Returns `lastSeq`.
    @discardableResult
    package func recordUpload(salt: Int64, firstSeq: Int64, lastSeq: Int64) async throws(StoreError) -> Int64 {
        try await writeAttaching(nil) { db in
            try UploadRecords.record(db, salt: salt, firstSeq: firstSeq, lastSeq: lastSeq)
            return lastSeq
        }
    }

    /// Forgets the store's sync identity (and its server version and recorded uploads) and
    /// keeps its rows and every unsynced change: its next bind is a new device's, whose state
    /// download replays the unsynced changes on top (docs/client-reset.md, "Restored and
    /// cloned devices"). Durable when it returns. True when the store had an identity.
    @discardableResult
    package func forgetIdentity() async throws(StoreError) -> Bool {
        try await writeAttaching(nil) { db in try Self.forgetIdentity(db) }
    }

    /// ``forgetIdentity()`` of a store file the agent has not opened (`tetherd
    /// --forget-identities`, and the machine-id check before the first bind): one durable
    /// transaction; `notAStore` when the file is no Tether store.
    @discardableResult
    package static func forgetIdentity(ofStoreAt path: String) throws(StoreError) -> Bool {
        try NoFollow.refuseLinks(sqlite: path, place: .store)
        do {
            var config = Configuration()
            config.busyMode = .timeout(busyTimeout)
            config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            let queue = try DatabaseQueue(path: path, configuration: config)
            defer { try? queue.close() }  // the write committed; closing only releases the file
            return try queue.write { db in
                guard try MetaTable.exists(db) else { throw StoreError.notAStore(path: path) }
                return try forgetIdentity(db)
            }
        } catch {
            throw StoreError.wrap(error, path: path)
        }
    }

    private static func forgetIdentity(_ db: Database) throws -> Bool {
        guard try MetaTable.fetch(db)?.clientFile != nil else { return false }
        try MetaTable.setClientFile(db, nil)
        try MetaTable.setServerVersion(db, .none)
        return true
    }
}
