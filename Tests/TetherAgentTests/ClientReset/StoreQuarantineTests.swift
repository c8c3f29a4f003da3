import Foundation
import Testing
import TetherTestSupport
@testable import TetherAgent

/// Issue 32: the quarantine never moves a symbolic link and never changes its target.
@Suite struct StoreQuarantineTests {
    static func mode(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
    }

    @Test func aStoreThatIsALinkIsRefusedAndItsTargetKeepsItsModeAndBytes() throws {
        let dir = try TemporaryDirectory(prefix: "tether-quarantine")
        let target = dir.appending("elsewhere")
        let bytes = Data("not a store, not the agent's\n".utf8)
        try bytes.write(to: URL(fileURLWithPath: target))
        chmod(target, 0o600)
        let store = dir.appending("store.sqlite")
        #expect(symlink(target, store) == 0)
        let destination = dir.appending("recovery/p/quarantined.sqlite")

        var refused: StoreQuarantineError?
        do { try StoreQuarantine.move(store: store, to: destination) } catch { refused = error }
        let error = try #require(refused)
        #expect(error.isSymbolicLink)
        #expect(error.description.contains(store) && error.description.contains("quarantine"), "\(error)")
        #expect(error.hint.contains("symbolic link"))
        #expect(Self.mode(target) == 0o600, "the link's target keeps its mode")
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == bytes)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: store)) == target, "the link stays where it was")
        #expect(!FileManager.default.fileExists(atPath: destination))
    }

    @Test func aLinkPlantedAtTheDestinationIsRefused() throws {
        let dir = try TemporaryDirectory(prefix: "tether-quarantine")
        let store = try dir.write("store.sqlite", "damaged")
        chmod(store, 0o660)
        let target = try dir.write("elsewhere", "keep me")
        chmod(target, 0o600)
        try FileManager.default.createDirectory(atPath: dir.appending("recovery"), withIntermediateDirectories: true)
        let destination = dir.appending("recovery/quarantined.sqlite")
        #expect(symlink(target, destination + "-wal") == 0)

        var refused: StoreQuarantineError?
        do { try StoreQuarantine.move(store: store, to: destination) } catch { refused = error }
        #expect(refused?.isSymbolicLink == true, "\(String(describing: refused))")
        #expect(Self.mode(target) == 0o600)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me")
        #expect(FileManager.default.fileExists(atPath: store), "nothing moved")

        // The link gone, the store and its companion move, mode 0640 set through descriptors.
        #expect(unlink(destination + "-wal") == 0)
        _ = try dir.write("store.sqlite-wal", "wal")
        let moved = try StoreQuarantine.move(store: store, to: destination)
        #expect(Set(moved) == [destination, destination + "-wal"])
        #expect(Self.mode(destination) == 0o640 && Self.mode(destination + "-wal") == 0o640)
        #expect(!FileManager.default.fileExists(atPath: store))
    }
}
