import Foundation
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport

/// The write-once bootstrap: a complete staging store becomes a new device's store without a
/// second copy of its rows, and never over a file that is already at the store's path.
@Suite struct PartitionStoreInstallTests {
    static let identity = ClientFileIdentity(id: 4, salt: 44)
    static let version = ServerVersion(version: 12, salt: 3)

    /// A complete staging store with `rows` orders, closed.
    static func staging(_ dir: TemporaryDirectory, rows: Int) async throws -> String {
        let path = dir.appending("staging/shop-1-bootstrap.sqlite")
        try FileManager.default.createDirectory(atPath: dir.appending("staging"), withIntermediateDirectories: true)
        let staging = try await PartitionStore.open(path: path, partition: testPartition, schema: testSchema)
        try await staging.insertStateRows((0..<rows).map { row in
            StateRow(table: "orders", key: .text("o\(row)"), fields: [
                "customer": .text("c"), "total": .real(1), "qty": .integer(1), "paid": .integer(0), "note": .null, "photo": .null,
            ])
        })
        try await staging.completeState(serverVersion: version, clientFile: identity)
        try staging.close()
        return path
    }

    @Test func aCompleteStagingStoreBecomesTheStore() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        let staging = try await Self.staging(dir, rows: 50)
        let path = dir.appending("stores/shop-1.sqlite")
        try FileManager.default.createDirectory(atPath: dir.appending("stores"), withIntermediateDirectories: true)
        #expect(PartitionStore.installWithoutCopy(staging: staging, at: path))
        #expect(!FileManager.default.fileExists(atPath: staging), "the staging name is gone")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o660)
        let store = try await PartitionStore.open(path: path, partition: testPartition, schema: testSchema)
        defer { try? store.close() }
        let metadata = try await store.metadata()
        #expect(metadata.clientFile == Self.identity)
        #expect(metadata.serverVersion == Self.version)
        #expect(try await store.pendingChangeCount() == 0)
        #expect(try await sqlite3(path, "SELECT count(*) FROM orders").stdout == "50\n")
        // The capture triggers are there: an application's write is captured.
        #expect(try await sqlite3(path, "UPDATE orders SET total = 2 WHERE id = 'o1'").status == 0)
        #expect(try await store.pendingChangeCount() == 1)
    }

    @Test func aFileAlreadyAtThePathIsNeverReplaced() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        let staging = try await Self.staging(dir, rows: 3)
        let path = dir.appending("shop-1.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        #expect(!PartitionStore.installWithoutCopy(staging: staging, at: path))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).isEmpty, "the application's file is untouched")
        #expect(FileManager.default.fileExists(atPath: staging), "the staging store stays for the long way")
    }

    @Test func aStagingStoreWithAWALNotCheckpointedIsNotInstalled() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        let staging = try await Self.staging(dir, rows: 3)
        #expect(FileManager.default.createFile(atPath: staging + "-wal", contents: Data([1, 2, 3])))
        let path = dir.appending("shop-1.sqlite")
        #expect(!PartitionStore.installWithoutCopy(staging: staging, at: path))
        #expect(!FileManager.default.fileExists(atPath: path), "no store rather than one without its journal")
    }

    /// A crash after the link and before the staging name is removed: the store is complete,
    /// and the next download removes the staging name (it starts by removing its files).
    @Test func aCrashBetweenLinkAndUnlinkLeavesACompleteStore() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        let staging = try await Self.staging(dir, rows: 7)
        let path = dir.appending("shop-1.sqlite")
        #expect(link(staging, path) == 0)  // what install does first, then it "crashed"
        let store = try await PartitionStore.open(path: path, partition: testPartition, schema: testSchema)
        #expect(try await store.metadata().clientFile == Self.identity)
        try store.close()
        PartitionStore.removeFiles(at: staging)
        #expect(try await sqlite3(path, "SELECT count(*) FROM orders").stdout == "7\n")
    }
}
