import Foundation
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// What only the SQLite storage does (an online backup reopened as the database); every other
/// storage behaviour is in `StorageConformanceTests`, run against both backends.
@Suite struct SQLiteServerStorageTests {
    let partition = PartitionName("store-17")!
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    func withStorage(_ body: (SQLiteServerStorage, TemporaryDirectory) async throws -> Void) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let storage = try SQLiteServerStorage(directory: dir.path)
        try await body(storage, dir)
        try await storage.close()
    }

    @Test func runtimeGrantsAndBackup() async throws {
        try await withStorage { storage, dir in
            let pattern = try GrantPattern.parse("catalog-*").get()
            try await storage.setRuntimeGrant(RuntimeGrant(user: "pos", pattern: pattern, access: .read))
            try await storage.setRuntimeGrant(RuntimeGrant(user: "pos", pattern: pattern, access: nil))
            #expect(try await storage.runtimeGrants() == [RuntimeGrant(user: "pos", pattern: pattern, access: nil)])
            _ = try await storage.registerClientFile(in: partition, now: now)
            let copy = dir.appending("backup.sqlite")
            try await storage.backup(to: copy)
            let restoredDir = dir.appending("restored")
            try FileManager.default.createDirectory(atPath: restoredDir, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: copy, toPath: restoredDir + "/" + SQLiteServerStorage.fileName)
            let restored = try SQLiteServerStorage(directory: restoredDir)
            #expect(try await restored.partitions().map(\.name) == ["store-17"])
            #expect(try await restored.runtimeGrants().count == 1)
            try await restored.close()
        }
    }
}

/// `integer(1)`, `text("a")`: key values spelled out (RowKey's description hides them).
func keyText(_ key: RowKey) -> String {
    switch key {
    case .integer(let v): "integer(\(v))"
    case .text(let v): "text(\(v.debugDescription))"
    }
}
