import Foundation
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport

/// The store's half of its lineage (`_tether_uploads`, docs/sync-model.md "Store lineage"):
/// ranges recorded before sending, dropped once acknowledged or when the identity changes.
@Suite struct PartitionStoreLineageTests {
    static func write(_ store: PartitionStore, _ ids: [String]) async throws {
        try await sqlite3(store.path, ids.map {
            "INSERT INTO orders (id, customer, total, qty, paid) VALUES ('\($0)', 'c', 1, 1, 0);"
        }.joined())
    }

    @Test func rangesAreRecordedGrowAndGoWithTheAcknowledgement() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-lineage")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.setClientFile(ClientFileIdentity(id: 3, salt: 30))
        try await Self.write(store, ["a", "b", "c"])
        var lineage = try await store.lineage(uploadSalt: 11)
        #expect(lineage == StoreLineage(uploadSalt: 11, integratedSeq: 0, lastSeq: 3, sent: []))
        try await store.recordUpload(salt: 11, firstSeq: 1, lastSeq: 2)
        try await store.recordUpload(salt: 11, firstSeq: 1, lastSeq: 3)  // grows
        try await store.recordUpload(salt: 11, firstSeq: 1, lastSeq: 1)  // never shrinks
        try await Self.write(store, ["d"])
        try await store.recordUpload(salt: 12, firstSeq: 4, lastSeq: 4)
        lineage = try await store.lineage(uploadSalt: 13)
        #expect(lineage.lastSeq == 4)
        #expect(lineage.sent == [.init(salt: 11, firstSeq: 1, lastSeq: 3), .init(salt: 12, firstSeq: 4, lastSeq: 4)])
        // The acknowledgement through seq 3 (an entry of this store's own changes).
        try await store.apply([serverEntry(1, integrated: 3)])
        lineage = try await store.lineage(uploadSalt: 13)
        #expect(lineage.integratedSeq == 3)
        #expect(lineage.sent == [.init(salt: 12, firstSeq: 4, lastSeq: 4)])
        // A new identity (a reset) starts without ranges.
        try await store.setClientFile(ClientFileIdentity(id: 4, salt: 40))
        #expect(try await store.lineage(uploadSalt: 13).sent.isEmpty)
    }

    @Test func atMostTheNewestRangesAreKept() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-lineage")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        // As many ranges as are kept, in one transaction (a thousand durable writes would only
        // slow the suite), then five more recorded the agent's way.
        let limit = Int64(ProtocolLimits.maxSentRanges)
        try await sqlite3(store.path, """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(limit))
            INSERT INTO _tether_uploads (salt, first_seq, last_seq) SELECT i, i, i FROM n;
            """)
        for salt in limit + 1...limit + 5 {
            try await store.recordUpload(salt: salt, firstSeq: salt, lastSeq: salt)
        }
        let sent = try await store.lineage(uploadSalt: 1).sent
        #expect(sent.count == ProtocolLimits.maxSentRanges)
        #expect(sent.first?.salt == 6 && sent.last?.salt == limit + 5)
    }

    /// A forgotten identity keeps the rows and every unsynced change; the store then binds as new.
    @Test func forgettingTheIdentityKeepsRowsAndUnsyncedChanges() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-lineage")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        try await store.setClientFile(ClientFileIdentity(id: 3, salt: 30))
        try await store.apply([serverEntry(1, [.insert("orders", .text("s"), order())])])
        try await Self.write(store, ["u"])
        try await store.recordUpload(salt: 11, firstSeq: 1, lastSeq: 1)
        let path = store.path
        try store.close()
        #expect(try PartitionStore.forgetIdentity(ofStoreAt: path))
        #expect(try !PartitionStore.forgetIdentity(ofStoreAt: path), "nothing left to forget")
        let reopened = try await PartitionStore.open(path: path, partition: testPartition, schema: testSchema)
        let meta = try await reopened.metadata()
        #expect(meta.clientFile == nil && meta.serverVersion == .none)
        #expect(try await reopened.pendingChangeCount() == 1)
        #expect(try await reopened.lineage(uploadSalt: 1).sent.isEmpty)
        #expect(try await sqlite3(path, "SELECT id FROM orders ORDER BY id").stdout == "s\nu\n")
    }

    @Test func aFileThatIsNoStoreIsRefused() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-lineage")
        defer { dir.remove() }
        let path = dir.appending("other.sqlite")
        try await sqlite3(path, "CREATE TABLE t (x)")
        #expect(throws: StoreError.self) { try PartitionStore.forgetIdentity(ofStoreAt: path) }
    }
}
