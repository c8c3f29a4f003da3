import Foundation
import GRDB
import Testing
import TetherProtocol
@testable import TetherStore
import TetherTestSupport

/// docs/store.md "Durability": the agent's connections commit with `synchronous = NORMAL`; the
/// transactions a reset record moves past (the rewrite, emptying the store) are made durable
/// with `FULL`, and the connection goes back to `NORMAL` after them.
@Suite struct PartitionStoreDurabilityTests {
    static func synchronous(_ db: Database) throws -> Int { try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }

    @Test func theAgentsConnectionsUseNormalAndResetTransactionsFull() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        let store = try await makeStore(dir)
        defer { try? store.close() }
        #expect(try await store.write { try Self.synchronous($0) } == 1, "NORMAL on the writer")
        #expect(try await store.read { try Self.synchronous($0) } == 1, "NORMAL on the readers")
        #expect(try await store.writeAttaching(nil) { try Self.synchronous($0) } == 2, "FULL for a reset's transaction")
        #expect(try await store.write { try Self.synchronous($0) } == 1, "NORMAL again after it")
        // A rewrite and an emptying go through that transaction and leave the writer as it was.
        try await store.resetInPlace(to: ArrayStateSource([StateRow(table: "orders", key: .text("a"), fields: order())]), serverVersion: ServerVersion(version: 3, salt: 1))
        #expect(try await store.emptyInPlace() == 1)
        #expect(try await store.write { try Self.synchronous($0) } == 1)
    }
}
