import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Issue 32 on real processes: a store that is a symbolic link is refused with a clear error
/// (never followed, its target untouched).
@Suite(.serialized, .timeLimit(.minutes(5)))
struct StoreSafetyEndToEndTests {
    static func mode(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
    }

    @Test func aStoreReplacedByASymbolicLinkIsRefusedAndItsTargetUntouched() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('k1', 'kim', 3)")
            try await a.waitSynced("p")
            await a.stop()
            // The store moved elsewhere, a link left in its place.
            let store = a.store("p")
            let elsewhere = a.dir + "/elsewhere.sqlite"
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: store + suffix) {
                #expect(rename(store + suffix, elsewhere + suffix) == 0)
            }
            chmod(elsewhere, 0o600)
            #expect(symlink(elsewhere, store) == 0)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: elsewhere))

            try await a.start()
            let error = try await eventually("p reports the link", timeout: .seconds(30)) {
                try await a.status("p")?["last_error"]?["message"]?.stringValue.flatMap { $0.contains("symbolic link") ? $0 : nil }
            }
            #expect(error.contains("store \(store) is a symbolic link; refused, not followed"), "\(error)")
            #expect(a.log.contains("store \(store) is a symbolic link"), "logged")
            #expect(Self.mode(elsewhere) == 0o600, "the link's target keeps its mode")
            #expect(try Data(contentsOf: URL(fileURLWithPath: elsewhere)) == bytes, "and its bytes")
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: store)) == elsewhere, "the link is left for the operator")
            #expect(try await a.resets().isEmpty, "no quarantine, no reset")
            let kept = try await ChildProcess.run("/usr/bin/sqlite3", [elsewhere, "SELECT customer FROM orders WHERE id = 'k1'"])
            #expect(kept.standardOutput == "kim\n", "\(kept)")
        }
    }
}
