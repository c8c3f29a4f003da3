import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// A single-use key raced from two agents.
extension EnrollmentFleetEndToEndTests {
    /// Two tetherd started at once with the same single-use key, each on another instance
    /// (both on the one server with SQLite): exactly one enrolls and syncs; the other is told
    /// the key is used up, says so once and writes no token file; the key shows 1 of 1 spent.
    @Test(arguments: storages)
    func aSingleUseKeyRacedFromTwoAgentsEnrollsExactlyOne(_ storage: ClusterSettings.Storage) async throws {
        try await withCluster(Self.settings(storage)) { cluster in
            let instances = cluster.ports.count
            try await cluster.admin(["grant", "tag:fleet=race", "race", "readwrite"])
            let key = try await cluster.createEnrollmentKey(["--tag", "fleet=race", "--note", "one till"])
            var racers: [(agent: ClusterAgent, machine: String)] = []
            for (index, name) in ["racer-a", "racer-b"].enumerated() {
                let agent = try cluster.enrollingAgent(
                    name, partitions: ["race"], keyFile: cluster.dir.appending(name) + "/enroll.key",
                    url: cluster.url(instance: index % instances))
                try agent.installEnrollmentKey(key)
                racers.append((agent, try cluster.dir.write("machine-\(name)", String(repeating: "\(index + 4)", count: 32) + "\n")))
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for racer in racers { group.addTask { try await racer.agent.start(environment: ["TETHER_MACHINE_ID_FILE": racer.machine]) } }
                try await group.waitForAll()
            }
            let usedUp = "(used_up_key, HTTP 403); tetherd does not enroll or sync until the configuration is reloaded"
            let (winner, loser) = try await eventually("one enrolled, the other refused", timeout: .seconds(60)) {
                () -> (ClusterAgent, ClusterAgent)? in
                let (a, b) = (racers[0].agent, racers[1].agent)
                if a.enrolledDeviceID != nil, b.log.contains(usedUp) { return (a, b) }
                if b.enrolledDeviceID != nil, a.log.contains(usedUp) { return (b, a) }
                return nil
            }
            // The winner syncs.
            try await winner.waitSynced("race")
            try await winner.sql("race", "INSERT INTO orders (id, customer, total) VALUES ('won', '\(winner.name)', 1)")
            try await winner.waitSynced("race")
            let observer = try cluster.agent("hq", partitions: ["race"], url: cluster.url(instance: instances - 1))
            try await observer.start()
            try await observer.waitSynced("race")
            try await eventually("the winner's row on the server", timeout: .seconds(30)) {
                try await observer.rows("race") == "won|\(winner.name)|1.0|-\n"
            }

            // The loser: refused once with the code and hint, no token file, still running, not syncing.
            #expect(loser.log.components(separatedBy: "used_up_key, HTTP 403").count == 2, "logged once: \(loser.log.suffix(3000))")
            #expect(!FileManager.default.fileExists(atPath: loser.dir + "/token") && loser.enrolledDeviceID == nil)
            #expect(!loser.hasExited)
            let errors = try await loser.events("sync-error")
            #expect(errors.contains { $0["name"]?.stringValue == "enrollment_used_up_key" }, "\(errors)")
            #expect(try await loser.status("race")?["state"]?.stringValue != "synced")

            // The server: one device, the winner's; the key spent once of once, on every instance.
            for instance in 0..<instances {
                let devices = try await cluster.enrolledDevices(instance: instance)
                #expect(devices.compactMap { $0["device_id"]?.stringValue } == [winner.enrolledDeviceID].compactMap { $0 }, "\(devices)")
                let keys = try await cluster.enrollmentKeys(instance: instance)
                #expect(keys.count == 1 && keys[0]["uses_spent"] == 1 && keys[0]["uses_allowed"] == 1, "\(keys)")
                #expect(keys.first?["state"]?.stringValue == "used-up", "\(keys)")
            }
        }
    }
}
