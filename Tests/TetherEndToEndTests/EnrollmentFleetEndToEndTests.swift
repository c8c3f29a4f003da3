import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// A fleet enrolled with the real programs (issue 48, docs/operations.md "Enrolling a fleet"):
/// real `tether-server` and `tetherd` processes on loopback, on SQLite with one server and on
/// PostgreSQL with two instances sharing it (the cluster starts its own PostgreSQL). A golden
/// image cloned three times (here), a single-use key raced from two agents (`+Race`), a device
/// revoked while it uploads (`+Revocation`). Applications are played by the `sqlite3` CLI; the
/// server's side is seen by `hq`, an agent of the config file's `[[user]]` granted every
/// partition. Serialized: each test runs a PostgreSQL, two servers and up to five agents.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct EnrollmentFleetEndToEndTests {
    static let storages: [ClusterSettings.Storage] = [.sqlite, .postgresql]

    /// One server on SQLite; two instances sharing one PostgreSQL database.
    static func settings(_ storage: ClusterSettings.Storage) -> ClusterSettings {
        ClusterSettings(storage: storage, instances: storage == .postgresql ? 2 : 1, directoryPrefix: "tether-fleet")
    }

    /// The fleet's grants, made once before any device exists: every till syncs its store's
    /// partition and reads the catalog.
    static func grantTheFleet(_ cluster: Cluster) async throws {
        try await cluster.admin(["grant", "tag:fleet=tills", "store-{tag:store}", "readwrite"])
        try await cluster.admin(["grant", "tag:fleet=tills", "catalog", "read"], instance: cluster.ports.count - 1)
    }

    @Test(arguments: storages)
    func aGoldenImageClonedThreeTimesGivesThreeDevicesEachSyncingItsOwnStore(_ storage: ClusterSettings.Storage) async throws {
        try await withCluster(Self.settings(storage)) { cluster in
            let instances = cluster.ports.count
            try await Self.grantTheFleet(cluster)
            let key = try await cluster.createEnrollmentKey(["--reusable", "--tag", "fleet=tills", "--note", "golden image"])
            let hq = try cluster.agent("hq", partitions: ["catalog", "store-1", "store-2", "store-3"], url: cluster.url(instance: instances - 1))
            try await hq.start()
            try await hq.waitSynced("catalog")
            try await hq.sql("catalog", "INSERT INTO orders (id, customer, total) VALUES ('sku-1', 'catalog', 9.5)")
            try await hq.waitSynced("catalog")

            let image = try await Self.goldenImage(cluster, key: key)
            // Three machines made from the image: each a copy of its directory (`cp -a`), a
            // machine id of its own (a first boot makes one), and the config a provisioning
            // step writes for it: its store's partition and the catalog, no token.
            var clones: [(agent: ClusterAgent, machine: String)] = []
            for n in 1...3 {
                let name = "clone-\(n)"
                try FileManager.default.copyItem(atPath: image, toPath: cluster.dir.appending(name))
                chmod(cluster.dir.appending(name) + "/enroll.key", 0o600)
                let agent = try cluster.enrollingAgent(
                    name, partitions: ["store-\(n)", "catalog"], keyFile: cluster.dir.appending(name) + "/enroll.key",
                    url: cluster.url(instance: (n - 1) % instances))
                let machine = try cluster.dir.write("machine-\(n)", String(repeating: "\(n)", count: 32) + "\n")
                clones.append((agent, machine))
            }
            // They boot together, as a fleet does.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for clone in clones { group.addTask { try await clone.agent.start(environment: ["TETHER_MACHINE_ID_FILE": clone.machine]) } }
                try await group.waitForAll()
            }
            var ids: [String] = []
            for (agent, _) in clones {
                // The credential is written, then the agent says so.
                ids.append(try await eventually("\(agent.name) enrolled", timeout: .seconds(60)) {
                    agent.log.contains("enrolled as device ") ? agent.enrolledDeviceID : nil
                })
            }
            #expect(Set(ids).count == 3, "three device ids: \(ids)")

            // Three devices of the server, whichever instance is asked, each with the key's tags.
            for instance in 0..<instances {
                let devices = try await cluster.enrolledDevices(instance: instance)
                #expect(Set(devices.compactMap { $0["device_id"]?.stringValue }) == Set(ids), "\(devices)")
                #expect(devices.allSatisfy { $0["tags"] == ["fleet": "tills"] && $0["state"] == "active" }, "\(devices)")
            }
            let names = try await Self.names(cluster, of: ids)

            // The operator tags each till with its store; grants by tag follow at once.
            for (index, name) in names.enumerated() {
                try await cluster.admin(["device", "tag", name, "store=\(index + 1)"], instance: index % instances)
            }
            for (index, (agent, _)) in clones.enumerated() {
                let store = "store-\(index + 1)"
                try await eventually("\(agent.name) bound to \(store)", timeout: .seconds(90), pollInterval: .milliseconds(250)) {
                    try await agent.status(store)?["state"]?.stringValue == "synced"
                }
                try await agent.waitSynced("catalog")
                try await agent.sql(store, "INSERT INTO orders (id, customer, total) VALUES ('till-\(index + 1)', '\(agent.name)', \(index + 1))")
                try await agent.waitSynced(store)
                #expect(try await agent.rows("catalog") == "sku-1|catalog|9.5|-\n", "the catalog reaches every till")
            }
            // hq sees each store's row on the server, each in its own store only.
            for index in 0..<3 {
                try await eventually("hq has store-\(index + 1)", timeout: .seconds(30)) {
                    try await hq.rows("store-\(index + 1)") == "till-\(index + 1)|clone-\(index + 1)|\(Double(index + 1))|-\n"
                }
            }

            // The catalog is read-only on the tills: an application's write is refused by the store.
            let refused = try await Self.sqlite(clones[0].agent.store("catalog"), "INSERT INTO orders (id, customer, total) VALUES ('sku-x', 'till', 1)")
            #expect(!refused.succeeded && refused.standardError.contains("partition catalog is read-only"), "\(refused)")
            #expect(try await clones[0].agent.rows("catalog") == "sku-1|catalog|9.5|-\n")

            // clone-1 configured with clone-2's store is refused it (206); its own partitions go on.
            try clones[0].agent.reconfigure { $0.partitions.append("store-2") }
            try await clones[0].agent.reload()
            let denied = try await eventually("store-2 refused to clone-1", timeout: .seconds(60)) {
                try await clones[0].agent.events("sync-error", partition: "store-2").first { $0["code"]?.numberValue == 206 }
            }
            #expect(denied["action"]?.stringValue == "delete_store" && denied["name"]?.stringValue == "permission_denied", "\(denied)")
            #expect(denied["message"]?.stringValue?.hasSuffix("has no grant for partition store-2") == true, "\(denied)")
            #expect(try await clones[0].agent.status("store-2")?["last_error"]?["code"]?.numberValue == 206)
            let access = try await cluster.admin(["access", names[0]])
            #expect(access.contains("store-1") && !access.contains("store-2"), "\(access)")
            try await clones[0].agent.sql("store-1", "INSERT INTO orders (id, customer, total) VALUES ('till-1b', 'clone-1', 11)")
            try await clones[0].agent.waitSynced("store-1")
            try await eventually("hq has till-1b", timeout: .seconds(30)) { try await hq.rows("store-1").contains("till-1b|") }
            #expect(try await hq.rows("store-2") == "till-2|clone-2|2.0|-\n")
            // A refusal before a partition's first bootstrap has no store to reset.
            for (agent, _) in clones { #expect(!agent.log.contains("client reset could not start"), "\(agent.log.suffix(3000))") }
        }
    }

    /// A golden image, as an image is really made: the agent package installed on a build
    /// machine with the fleet's reusable key in `enroll.key` (mode 0600) and a config that names
    /// it and no token; booted once (tetherd starts, makes its state database and records the
    /// machine, but the build network cannot reach the sync server, so it does not enroll and
    /// no token is written); then tetherd stopped and `tetherd --forget-identities` run, as
    /// docs/operations.md says to before imaging. The image is the directory that leaves
    /// (config, key, hooks, state); its path.
    static func goldenImage(_ cluster: Cluster, key: String) async throws -> String {
        let unreachable = "ws://127.0.0.1:\(try LoopbackPort.free())/sync"
        let golden = try cluster.enrollingAgent(
            "golden", partitions: ["catalog"], keyFile: cluster.dir.appending("golden") + "/enroll.key", url: unreachable)
        try golden.installEnrollmentKey(key)
        let machine = try cluster.dir.write("machine-golden", String(repeating: "0", count: 32) + "\n")
        try await golden.start(environment: ["TETHER_MACHINE_ID_FILE": machine])
        try await eventually("the golden machine tried to enroll", timeout: .seconds(30)) { golden.log.contains("enrolling device") }
        #expect(await golden.stop()?.succeeded == true)
        let forget = try await ChildProcess.run(
            try BuiltProducts.executable("tetherd"), ["--config", golden.configPath, "--forget-identities"],
            environment: ChildProcess.inheritedEnvironment(adding: ["TETHER_MACHINE_ID_FILE": machine]))
        #expect(forget.succeeded, "\(forget)")
        #expect(!FileManager.default.fileExists(atPath: golden.dir + "/token"), "the image carries the key, not a credential")
        return golden.dir
    }

    /// The names the server gave the devices of `ids`, in that order.
    static func names(_ cluster: Cluster, of ids: [String]) async throws -> [String] {
        let devices = try await cluster.enrolledDevices()
        return try ids.map { id in
            guard let name = devices.first(where: { $0["device_id"]?.stringValue == id })?["name"]?.stringValue else {
                throw TestSupportError("no enrolled device \(id) in \(devices)")
            }
            return name
        }
    }

    /// `sqlite3 FILE STATEMENT`, as an application runs it; its result, failed or not.
    static func sqlite(_ file: String, _ statement: String) async throws -> ChildProcess.Result {
        try await ChildProcess.run("/usr/bin/sqlite3", ["-cmd", ".timeout 10000", file, statement], timeout: .seconds(30))
    }
}
