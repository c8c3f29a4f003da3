import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Issue 32 on real processes: a store or a state database that is a symbolic link is refused
/// with a clear error (never followed, its target untouched), and a state download that does
/// not fit on the disk is refused with a clear error while the store keeps everything it had.
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

    /// A link planted where a new partition's bootstrap writes its staging store: the
    /// partition stops with the error shown, and the link's target is untouched.
    @Test func aStagingStoreThatIsASymbolicLinkStopsTheBootstrap() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let staging = a.dir + "/state/staging/p-bootstrap.sqlite"
            try FileManager.default.createDirectory(atPath: a.dir + "/state/staging", withIntermediateDirectories: true)
            let elsewhere = a.dir + "/elsewhere"
            #expect(FileManager.default.createFile(atPath: elsewhere, contents: Data("keep\n".utf8), attributes: [.posixPermissions: 0o600]))
            #expect(symlink(elsewhere, staging) == 0)
            try await a.start()
            let error = try await eventually("p reports the link", timeout: .seconds(30)) {
                try await a.status("p")?["last_error"]?["message"]?.stringValue.flatMap { $0.contains("symbolic link") ? $0 : nil }
            }
            #expect(error.contains("staging \(staging) is a symbolic link; refused, not followed"), "\(error)")
            #expect(try await a.status("p")?["state"] == "stopped")
            #expect(Self.mode(elsewhere) == 0o600)
            #expect(try String(contentsOfFile: elsewhere, encoding: .utf8) == "keep\n")
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: staging)) == elsewhere)
        }
    }

    /// A state database that is a symbolic link stops the daemon at start with the path named;
    /// the link's target is neither written nor given another mode.
    @Test func aStateDatabaseThatIsASymbolicLinkStopsTheDaemonAtStart() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try FileManager.default.createDirectory(atPath: a.dir + "/state", withIntermediateDirectories: true)
            let elsewhere = a.dir + "/elsewhere"
            #expect(FileManager.default.createFile(atPath: elsewhere, contents: Data(), attributes: [.posixPermissions: 0o600]))
            let database = a.dir + "/state/state.sqlite"
            #expect(symlink(elsewhere, database) == 0)
            let result = try await ChildProcess.run(
                try BuiltProducts.executable("tetherd"), ["--config", a.configPath, "--log-destination", "stderr"], timeout: .seconds(30))
            #expect(!result.timedOut && result.status == 1, "\(result)")
            #expect(result.standardError.contains("state database \(database) is a symbolic link; refused, not followed"), "\(result)")
            #expect(Self.mode(elsewhere) == 0o600)
            #expect((try FileManager.default.attributesOfItem(atPath: elsewhere)[.size] as? Int) == 0, "nothing written through the link")
        }
    }

    @Test func aStateDownloadThatDoesNotFitIsRefusedAndTheStoreKeepsItsRows() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            let snapshot = try await cluster.admin(["snapshot", "p"])
            let id = snapshot.split(separator: " ").first { $0.count == 16 && $0.allSatisfy(\.isHexDigit) }.map(String.init) ?? snapshot
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('x', 'xena', 1)")
            try await a.waitSynced("p")
            await a.stop()

            // Restarted claiming 1000 free bytes, with a new partition to bootstrap.
            try a.reconfigure { $0.partitions = ["p", "q"] }
            try await a.start(environment: ["TETHER_FAULT_FREE_BYTES": "1000"])
            let bootstrap = try await eventually("q reports the refusal", timeout: .seconds(30)) {
                try await a.status("q")?["last_error"]?["message"]?.stringValue.flatMap { $0.contains("not enough free space") ? $0 : nil }
            }
            #expect(bootstrap.contains("\(a.dir)/state/staging"), "\(bootstrap)")
            #expect(bootstrap.contains("1000 bytes free"), "\(bootstrap)")
            #expect(a.log.contains("state download of q refused, retrying"))
            #expect(!FileManager.default.fileExists(atPath: a.store("q")), "no store made of a download that did not fit")

            // A reset of p meets the same refusal at its download; the store keeps its rows.
            try await cluster.admin(["restore", "p", id])
            try await eventually("p's reset download refused", timeout: .seconds(60)) {
                a.log.contains("phase fetching failed") && a.log.contains("not enough free space for the server's state")
            }
            #expect(try await a.rows("p").contains("x|xena|1.0|-"), "the store keeps its rows")
            let reported = try await a.status("p")?["last_error"]?["message"]?.stringValue ?? ""
            #expect(reported.contains("not enough free space for the server's state"), "p's last_error: \(reported)")
            #expect(try await a.status("p")?["state"] == "resetting")
        }
    }
}
