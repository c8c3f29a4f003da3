import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Devices restored from older disk images and devices cloned from one another (issue "A device
/// restored from an older disk image, or cloned from a golden image, silently loses writes"),
/// with real servers and agents: every write of every copy reaches every device.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct StoreLineageEndToEndTests {
    /// A copy of a stopped agent's whole state directory (a disk image, a VM snapshot).
    static func image(_ agent: ClusterAgent, to path: String) throws {
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: agent.dir + "/state", toPath: path)
    }

    /// Puts `image` back as `agent`'s state directory (the agent stopped).
    static func restore(_ image: String, to agent: ClusterAgent) throws {
        try? FileManager.default.removeItem(atPath: agent.dir + "/state")
        try FileManager.default.copyItem(atPath: image, toPath: agent.dir + "/state")
    }

    /// Copies the files of one SQLite database (`-wal`, `-shm` too) from `source` to `target`.
    static func copyDatabase(_ source: String, to target: String) throws {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: target + suffix)
            if FileManager.default.fileExists(atPath: source + suffix) {
                try FileManager.default.copyItem(atPath: source + suffix, toPath: target + suffix)
            }
        }
    }

    static func clientFile(_ agent: ClusterAgent) async throws -> String {
        try await agent.sql("p", "SELECT client_file_id FROM _tether_meta").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func insert(_ agent: ClusterAgent, _ ids: [String]) async throws {
        try await agent.sql("p", ids.map { "INSERT INTO orders (id, customer, total) VALUES ('\($0)', '\(agent.name)', 1);" }.joined())
    }

    /// Agents `a` and `b` of partition `p`, started and synced.
    static func pair(_ cluster: Cluster, extra: String = "") async throws -> (ClusterAgent, ClusterAgent) {
        let a = try cluster.agent("a", partitions: ["p"], extra: extra)
        let b = try cluster.agent("b", partitions: ["p"])
        try await a.start()
        try await b.start()
        try await a.waitSynced("p")
        try await b.waitSynced("p")
        return (a, b)
    }

    /// Inserts `ids` on `agent` and waits until they are synced.
    static func insertSynced(_ agent: ClusterAgent, _ ids: [String]) async throws {
        try await insert(agent, ids)
        try await agent.waitSynced("p")
    }

    static func ids(_ agent: ClusterAgent) async throws -> [String] {
        try await agent.sql("p", "SELECT id FROM orders ORDER BY id").split(separator: "\n").map(String.init)
    }

    /// Waits until the agent's last reset is done and the partition synced; returns that reset.
    static func resetDone(_ agent: ClusterAgent, outcome: String = "recovered") async throws -> JSONValue {
        let reset = try await eventually("\(agent.name) reset \(outcome)", timeout: .seconds(90)) { () -> JSONValue? in
            let last = try await agent.resets().last
            return last?["outcome"]?.stringValue == outcome ? last : nil
        }
        try await agent.waitSynced("p")
        return reset
    }

    /// A: r1 synced, imaged (stopped); then r2 and r3 synced (B has them); the image put back.
    /// Returns once the image is back in place, A stopped.
    static func restoredDevice(_ cluster: Cluster, image: String) async throws -> (ClusterAgent, ClusterAgent) {
        let (a, b) = try await pair(cluster)
        try await insertSynced(a, ["r1"])
        await a.stop()
        try Self.image(a, to: image)
        try await a.start()
        try await insertSynced(a, ["r2", "r3"])
        try await b.waitSynced("p")
        #expect(try await Self.ids(b) == ["r1", "r2", "r3"])
        await a.stop()
        try Self.restore(image, to: a)
        return (a, b)
    }

    /// The image restore of the issue: A writes r4 while restored and offline, then starts. The
    /// server sees a store behind its own record (210, store regressed): A resets, gets r2 and r3
    /// back from the server, and r4 reaches B.
    @Test func aDeviceRestoredFromAnOlderImageGetsItsSyncedWritesBackAndItsNewOnesOut() async throws {
        try await withCluster { cluster in
            let (a, b) = try await Self.restoredDevice(cluster, image: cluster.dir.appending("image"))
            try await Self.insert(a, ["r4"])
            try await a.start()
            let reset = try await Self.resetDone(a)
            #expect(reset["error_code"] == 210)
            #expect(reset["cause"] == "store-regressed")
            #expect(reset["error_message"]?.stringValue?.hasPrefix("store regressed: ") == true)
            try await b.waitSynced("p")
            #expect(try await Self.ids(a) == ["r1", "r2", "r3", "r4"])
            #expect(try await Self.ids(b) == ["r1", "r2", "r3", "r4"])
            let errors = try await a.events("sync-error")
            #expect(errors.contains { $0["code"] == 210 && $0["cause"] == "store-regressed" })
            #expect(try await b.resets().isEmpty, "the other device is not disturbed")
        }
    }

    /// The same without any write after the restore: a device that only reads gets back the
    /// writes it had synced after the image.
    @Test func aRestoredDeviceThatOnlyReadsGetsItsLostWritesBack() async throws {
        try await withCluster { cluster in
            let (a, b) = try await Self.restoredDevice(cluster, image: cluster.dir.appending("image"))
            try await a.start()
            let reset = try await Self.resetDone(a)
            #expect(reset["error_code"] == 210)
            #expect(try await Self.ids(a) == ["r1", "r2", "r3"])
            try await Self.insert(a, ["r5"])
            try await a.waitSynced("p")
            try await b.waitSynced("p")
            #expect(try await Self.ids(b) == ["r1", "r2", "r3", "r5"])
        }
    }

    /// A device that only downloaded after its image (B wrote): it binds at a server version
    /// older than one it reported at an earlier bind (209); it resets and loses nothing.
    @Test func aRestoredDeviceBehindTheVersionItConfirmedResets() async throws {
        try await withCluster { cluster in
            let (a, b) = try await Self.pair(cluster)
            try await Self.insertSynced(b, ["b1"])
            try await a.waitSynced("p")
            await a.stop()
            try Self.image(a, to: a.dir + "/image")
            try await Self.insertSynced(b, ["b2"])
            try await a.start()
            try await eventually("a has b2") { try await Self.ids(a) == ["b1", "b2"] }
            // A bind at the version with b2: the server records that the store had it.
            await a.stop()
            try await a.start()
            try await a.waitSynced("p")
            await a.stop()
            try Self.restore(a.dir + "/image", to: a)
            try await Self.insert(a, ["a1"])
            try await a.start()
            let reset = try await Self.resetDone(a)
            #expect(reset["error_code"] == 209)
            #expect(reset["cause"] == "store-regressed")
            try await b.waitSynced("p")
            #expect(try await Self.ids(a) == ["a1", "b1", "b2"])
            #expect(try await Self.ids(b) == ["a1", "b1", "b2"])
        }
    }

    /// Only the store file goes back to an older copy of itself (the state database untouched).
    @Test func aStoreFileReplacedByAnOlderCopyIsDetected() async throws {
        try await withCluster { cluster in
            let (a, b) = try await Self.pair(cluster)
            try await Self.insertSynced(a, ["r1"])
            await a.stop()
            try Self.copyDatabase(a.store("p"), to: a.dir + "/old.sqlite")
            try await a.start()
            try await Self.insertSynced(a, ["r2"])
            await a.stop()
            try Self.copyDatabase(a.dir + "/old.sqlite", to: a.store("p"))
            try await Self.insert(a, ["r3"])
            try await a.start()
            let reset = try await Self.resetDone(a)
            #expect(reset["error_code"] == 210)
            try await b.waitSynced("p")
            #expect(try await Self.ids(a) == ["r1", "r2", "r3"])
            #expect(try await Self.ids(b) == ["r1", "r2", "r3"])
        }
    }

    /// Only the state database goes back to an older copy: one taken while a manual reset was
    /// pending, put back after that reset was carried out and new writes were made. The stale
    /// record must not reset the healthy store again (in manual mode that discards): it is
    /// closed as superseded and the new writes sync.
    @Test func anOlderStateDatabaseDoesNotResetTheStoreAgain() async throws {
        try await withCluster { cluster in
            let (a, b) = try await Self.pair(cluster, extra: "[reset]\nmode = \"manual\"")
            try await Self.insertSynced(a, ["r1"])
            let snapshot = try await cluster.admin(["snapshot", "p"])
            try await Self.insertSynced(a, ["r2"])
            try await cluster.admin(["restore", "p", snapshot, "--rollback"])
            try await eventually("a pending", timeout: .seconds(60)) { try await a.status("p")?["state"] == "reset-pending" }
            await a.stop()
            let state = a.dir + "/state/state.sqlite"
            try Self.copyDatabase(state, to: a.dir + "/state-old.sqlite")
            try await a.start()  // a start carries the pending manual reset out
            _ = try await Self.resetDone(a, outcome: "manual-done")
            await a.stop()
            try await Self.insert(a, ["after"])
            try Self.copyDatabase(a.dir + "/state-old.sqlite", to: state)
            try await a.start()
            let closed = try await Self.resetDone(a, outcome: "superseded")
            #expect(closed["phase"] == "done")
            try await b.waitSynced("p")
            #expect(try await Self.ids(a) == ["after", "r1"])
            #expect(try await Self.ids(b) == ["after", "r1"])
        }
    }

    /// A clone started from a copy of a synced device's state (same token, same machine id: a
    /// VM cloned without a new one), offline for a while with writes of its own while the
    /// original writes too. The server tells the copies apart at the clone's bind: it resets to
    /// a new identity and keeps its writes; the original is not disturbed.
    @Test func aClonedDeviceOfflineForAWhileKeepsItsWritesAndTheOriginalIsNotDisturbed() async throws {
        try await withCluster { cluster in
            let (a, b) = try await Self.pair(cluster)
            let clone = try cluster.agent("clone", partitions: ["p"])
            try await Self.insertSynced(a, ["a1"])
            await a.stop()
            try Self.restore(a.dir + "/state", to: clone)
            try await a.start()
            try await Self.insertSynced(a, ["a2"])
            try await Self.insert(clone, ["c1", "c2"])  // offline
            try await clone.start()
            let reset = try await Self.resetDone(clone)
            #expect(reset["error_code"] == 210)
            #expect(reset["cause"] == "store-cloned")
            #expect(reset["error_message"]?.stringValue?.hasPrefix("store identity used by another device: ") == true)
            try await Self.insert(a, ["a3"])
            try await a.waitSynced("p")
            try await clone.waitSynced("p")
            try await b.waitSynced("p")
            let all = ["a1", "a2", "a3", "c1", "c2"]
            #expect(try await Self.ids(a) == all)
            #expect(try await Self.ids(b) == all)
            #expect(try await Self.ids(clone) == all)
            #expect(try await a.resets().isEmpty, "the original keeps its identity")
            let (fileA, fileClone) = (try await Self.clientFile(a), try await Self.clientFile(clone))
            #expect(fileA != fileClone)
        }
    }

    /// A clone whose machine id differs from the one recorded with the state (a golden image's
    /// first boot): it forgets the identity before its first bind and says so; the server
    /// never sees two places with one identity, and no reset runs.
    @Test func aCloneWithANewMachineIDForgetsItsIdentityBeforeBinding() async throws {
        try await withCluster { cluster in
            let machineA = try cluster.dir.write("machine-a", "0123456789abcdef0123456789abcdef\n")
            let machineC = try cluster.dir.write("machine-c", "fedcba9876543210fedcba9876543210\n")
            let a = try cluster.agent("a", partitions: ["p"])
            let clone = try cluster.agent("clone", partitions: ["p"])
            try await a.start(environment: ["TETHER_MACHINE_ID_FILE": machineA])
            try await a.waitSynced("p")
            try await Self.insert(a, ["a1"])
            try await a.waitSynced("p")
            await a.stop()
            try Self.restore(a.dir + "/state", to: clone)
            try await Self.insert(clone, ["c1"])
            try await a.start(environment: ["TETHER_MACHINE_ID_FILE": machineA])
            try await clone.start(environment: ["TETHER_MACHINE_ID_FILE": machineC])
            try await Self.insertSynced(a, ["a2"])
            try await clone.waitSynced("p")
            try await a.waitSynced("p")
            #expect(try await Self.ids(a) == ["a1", "a2", "c1"])
            #expect(try await Self.ids(clone) == ["a1", "a2", "c1"])
            #expect(try await clone.resets().isEmpty)
            #expect(try await a.resets().isEmpty)
            let (fileA, fileClone) = (try await Self.clientFile(a), try await Self.clientFile(clone))
            #expect(fileA != fileClone)
            let forgotten = try await clone.events("identity")
            #expect(forgotten.contains { $0["partition"] == "p" && $0["cause"] == "machine-changed" })
            #expect(clone.log.contains("machine changed"))
            // Restarted on the same machine: nothing forgotten again.
            await clone.stop()
            let id = try await Self.clientFile(clone)
            try await clone.start(environment: ["TETHER_MACHINE_ID_FILE": machineC])
            try await clone.waitSynced("p")
            #expect(try await Self.clientFile(clone) == id)
        }
    }

    /// `tetherd --forget-identities` before imaging: refused while tetherd runs; then every
    /// store binds as a new device and keeps its unsynced changes.
    @Test func forgetIdentitiesPreparesAGoldenImage() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            try await Self.insert(a, ["a1"])
            try await a.waitSynced("p")
            let tetherd = try BuiltProducts.executable("tetherd")
            let refused = try await ChildProcess.run(tetherd, ["--config", a.configPath, "--forget-identities"])
            #expect(refused.status == 1 && refused.standardError.contains("tetherd is running"), "\(refused)")
            await a.stop()
            let before = try await Self.clientFile(a)
            try await Self.insert(a, ["unsynced"])
            let forgot = try await ChildProcess.run(tetherd, ["--config", a.configPath, "--forget-identities"])
            #expect(forgot.status == 0 && forgot.standardOutput.contains("sync identities forgotten: 1 (p)"), "\(forgot)")
            #expect(try await Self.clientFile(a) == "")
            try await a.start()
            try await a.waitSynced("p")
            #expect(try await Self.clientFile(a) != before)
            #expect(try await Self.ids(a) == ["a1", "unsynced"])
            #expect(try await a.resets().isEmpty)
        }
    }

    /// Two copies online at once whose histories agree (the original never uploads again): the
    /// clone meets 108 while the original stays bound; past the limit (here 3 s) it takes a new
    /// identity (210, store-cloned) and its writes reach the original, which is not disturbed.
    @Test func aCloneHeldOffBy108TakesANewIdentity() async throws {
        try await withCluster { cluster in
            let (a, _) = try await Self.pair(cluster)
            let clone = try cluster.agent("clone", partitions: ["p"])
            try await Self.insertSynced(a, ["a1"])
            await a.stop()
            try Self.restore(a.dir + "/state", to: clone)
            try await a.start()
            try await a.waitSynced("p")
            try await Self.insert(clone, ["c1"])
            try await clone.start(environment: ["TETHER_FAULT_BOUND_ELSEWHERE_SECONDS": "3"])
            let reset = try await Self.resetDone(clone)
            #expect(reset["error_code"] == 210 && reset["cause"] == "store-cloned")
            try await eventually("a has c1") { try await Self.ids(a) == ["a1", "c1"] }
            #expect(try await a.resets().isEmpty)
        }
    }
}
