import Foundation
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport

/// Issue 32: a symbolic link where the agent keeps a store, a backup or a staging file is
/// refused with an error naming the path and the place, and its target is left as it was.
@Suite struct NoFollowTests {
    /// A file elsewhere that a link points to: its mode and bytes must not change.
    struct Target {
        let path: String
        let bytes: Data
        let mode: mode_t

        init(_ dir: TemporaryDirectory, name: String = "elsewhere", bytes: Data = Data("precious, not SQLite\n".utf8), mode: mode_t = 0o600) throws {
            path = dir.appending(name)
            self.bytes = bytes
            self.mode = mode
            try bytes.write(to: URL(fileURLWithPath: path))
            chmod(path, mode)
        }

        func expectUnchanged(_ sourceLocation: SourceLocation = #_sourceLocation) throws {
            var info = stat()
            #expect(lstat(path, &info) == 0, sourceLocation: sourceLocation)
            #expect(info.st_mode & 0o7777 == mode, "mode of the link's target", sourceLocation: sourceLocation)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes, "bytes of the link's target", sourceLocation: sourceLocation)
        }
    }

    static func expectRefusal(_ error: StoreError?, path: String, place: StoreFilePlace, _ sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error == .symbolicLink(path: path, place: place.rawValue), "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.description.contains(path) == true && error?.description.hasPrefix(place.rawValue) == true, sourceLocation: sourceLocation)
        #expect(error?.isTransient == false, sourceLocation: sourceLocation)
    }

    @Test func aStoreThatIsALinkIsRefusedNotOpened() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-nofollow")
        let target = try Target(dir, bytes: Data())  // empty: SQLite would make a store of it
        let link = dir.appending("store.sqlite")
        #expect(symlink(target.path, link) == 0)
        var refused: StoreError?
        do { _ = try await PartitionStore.open(path: link, partition: testPartition, schema: testSchema) } catch { refused = error }
        Self.expectRefusal(refused, path: link, place: .store)
        try target.expectUnchanged()
    }

    @Test func aLinkBesideAStoreIsRefusedToo() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-nofollow")
        let target = try Target(dir)
        let store = dir.appending("store.sqlite")
        #expect(symlink(target.path, store + "-wal") == 0)
        var refused: StoreError?
        do { _ = try await PartitionStore.open(path: store, partition: testPartition, schema: testSchema) } catch { refused = error }
        Self.expectRefusal(refused, path: store + "-wal", place: .store)
        try target.expectUnchanged()
    }

    @Test func aBackupDestinationThatIsALinkIsRefused() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-nofollow")
        let store = try await makeStore(dir)
        let target = try Target(dir)
        let backup = dir.appending("backup.sqlite")
        #expect(symlink(target.path, backup) == 0)
        var refused: StoreError?
        do { try await store.backup(to: backup) } catch { refused = error }
        Self.expectRefusal(refused, path: backup, place: .backup)
        try target.expectUnchanged()
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: backup)) == target.path, "the link is left for the operator to see")
    }

    @Test func aBackupGetsItsModeWithoutAChmodOfItsPath() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-nofollow")
        let store = try await makeStore(dir)
        let backup = dir.appending("backup.sqlite")
        try await store.backup(to: backup, mode: 0o640)
        var info = stat()
        #expect(lstat(backup, &info) == 0 && info.st_mode & 0o7777 == 0o640)
        #expect(try PartitionStore.integrityCheck(ofFileAt: backup).isEmpty)
    }

    @Test func aStagingStoreThatIsALinkIsNeitherReadNorInstalled() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-nofollow")
        // A complete store elsewhere: following the link would take it for the server's state.
        let elsewhere = try await makeStore(dir, name: "elsewhere.sqlite")
        try await elsewhere.completeState(serverVersion: ServerVersion(version: 7, salt: 7), clientFile: ClientFileIdentity(id: 9, salt: 9))
        try elsewhere.close()
        chmod(dir.appending("elsewhere.sqlite"), 0o600)
        let target = try Target(dir, name: "elsewhere.sqlite", bytes: try Data(contentsOf: URL(fileURLWithPath: dir.appending("elsewhere.sqlite"))))
        let staging = dir.appending("staging.sqlite")
        #expect(symlink(target.path, staging) == 0)

        var refused: StoreError?
        do { _ = try PartitionStore.metadata(ofStoreAt: staging, place: .staging) } catch { refused = error }
        Self.expectRefusal(refused, path: staging, place: .staging)
        refused = nil
        do { _ = try await PartitionStore.open(path: staging, partition: testPartition, schema: testSchema, place: .staging) } catch {
            refused = error
        }
        Self.expectRefusal(refused, path: staging, place: .staging)
        refused = nil
        do { _ = try StoreStateSource(path: staging, schema: testSchema) } catch { refused = error }
        Self.expectRefusal(refused, path: staging, place: .staging)

        let store = dir.appending("store.sqlite")
        #expect(!PartitionStore.installWithoutCopy(staging: staging, at: store), "a linked staging file is not installed")
        #expect(!FileManager.default.fileExists(atPath: store))
        try target.expectUnchanged()
    }

    @Test func setModeRefusesALinkAndChangesAFile() throws {
        let dir = try TemporaryDirectory(prefix: "tether-nofollow")
        let target = try Target(dir)
        let link = dir.appending("link")
        #expect(symlink(target.path, link) == 0)
        var refused: StoreError?
        do { try NoFollow.setMode(link, 0o644, place: .quarantine) } catch { refused = error }
        Self.expectRefusal(refused, path: link, place: .quarantine)
        try target.expectUnchanged()
        let file = dir.appending("file")
        #expect(FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o600]))
        try NoFollow.setMode(file, 0o640, place: .quarantine)
        #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o640)
    }
}
