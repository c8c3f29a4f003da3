import GRDB
import TetherProtocol

/// `_tether_uploads`: the uploads a store sent (or was about to send) and the server has not
/// acknowledged, each a session's upload salt with the seqs it may send — the store's half of
/// its lineage (``StoreLineage``, docs/sync-model.md "Store lineage"). A range is recorded,
/// durably, before the first upload it covers leaves; it goes when an acknowledgement covers it,
/// and all go when the store's identity changes.
enum UploadRecords {
    static func all(_ db: Database) throws -> [StoreLineage.SentRange] {
        try Row.fetchAll(db, sql: "SELECT salt, first_seq, last_seq FROM _tether_uploads ORDER BY id").map {
            StoreLineage.SentRange(salt: $0[0], firstSeq: $0[1], lastSeq: $0[2])
        }
    }

    /// Records that the session with `salt` may send the seqs `firstSeq ... lastSeq` (a range
    /// already recorded for the salt only grows), keeping the newest
    /// ``ProtocolLimits/maxSentRanges``.
    static func record(_ db: Database, salt: Int64, firstSeq: Int64, lastSeq: Int64) throws {
        try db.execute(
            sql: """
                INSERT INTO _tether_uploads (salt, first_seq, last_seq) VALUES (?, ?, ?)
                ON CONFLICT(salt) DO UPDATE SET last_seq = max(last_seq, excluded.last_seq)
                """,
            arguments: [salt, firstSeq, lastSeq])
        try db.execute(
            sql: "DELETE FROM _tether_uploads WHERE id <= (SELECT max(id) FROM _tether_uploads) - ?",
            arguments: [ProtocolLimits.maxSentRanges])
    }

    /// Drops the ranges an acknowledgement through `seq` covers.
    static func trim(_ db: Database, through seq: Int64) throws {
        try db.execute(sql: "DELETE FROM _tether_uploads WHERE last_seq <= ?", arguments: [seq])
    }

    /// Also on a store file not migrated yet (``PartitionStore/forgetIdentity(ofStoreAt:)``).
    static func clear(_ db: Database) throws {
        guard try db.tableExists("_tether_uploads") else { return }
        try db.execute(sql: "DELETE FROM _tether_uploads")
    }
}
