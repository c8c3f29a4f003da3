import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// A device revoked while it uploads.
extension EnrollmentFleetEndToEndTests {
    /// What the writer wrote, and whether it should stop.
    struct Writes: Sendable {
        var ids: [String] = []
        var stop = false
    }

    /// An enrolled till uploading a steady stream of inserts (one `sqlite3` a row, no pauses) is
    /// revoked on the other instance: its sessions end with 203 (the agent reports it), it is
    /// listed revoked everywhere, every change the server acknowledged is on the server, and
    /// every row written stays in the device's store, the unsent ones still in its change log.
    /// Prints how long after `admin device revoke` returned the agent's sessions ended.
    @Test(arguments: storages)
    func aDeviceRevokedMidUploadLosesNoAcknowledgedChange(_ storage: ClusterSettings.Storage) async throws {
        try await withCluster(Self.settings(storage)) { cluster in
            let last = cluster.ports.count - 1
            try await Self.grantTheFleet(cluster)
            let key = try await cluster.createEnrollmentKey(["--tag", "fleet=tills", "--tag", "store=7"])
            let till = try cluster.enrollingAgent("till-7", partitions: ["store-7", "catalog"], keyFile: cluster.dir.appending("till-7") + "/enroll.key")
            try till.installEnrollmentKey(key)
            try await till.start()
            try await till.waitSynced("store-7", timeout: 60)
            try await till.waitSynced("catalog")
            let deviceID = try #require(till.enrolledDeviceID)
            let name = try #require(try await Self.names(cluster, of: [deviceID]).first)
            let hq = try cluster.agent("hq", partitions: ["store-7"], url: cluster.url(instance: last))
            try await hq.start()
            try await hq.waitSynced("store-7")

            let writes = AwaitableState(Writes())
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await Self.writeSteadily(till, "store-7", into: writes, for: .seconds(240)) }
                // Mid-upload: the server has acknowledged some of the stream, the rest is coming.
                try await eventually("the server has 20 of the till's rows", timeout: .seconds(60), pollInterval: .milliseconds(100)) {
                    try await hq.rows("store-7").split(separator: "\n").count >= 20
                }
                let clock = ContinuousClock()
                let began = Date()
                let elapsed = try await clock.measure {
                    let revoked = try await cluster.admin(["device", "revoke", name], instance: last)
                    #expect(revoked.contains("revoked"), "\(revoked)")
                }
                let returned = Date()
                // Every session of the device ends with 203, and the agent says so.
                let ended = try await eventually("the till's sessions ended (203)", timeout: .seconds(60), pollInterval: .milliseconds(50)) {
                    () -> Date? in
                    var latest: Date? = nil
                    for partition in ["store-7", "catalog"] {
                        let refused = try await till.events("sync-error", partition: partition).compactMap { event -> Date? in
                            guard event["code"]?.numberValue == 203, let at = event["at"]?.stringValue.flatMap(Self.eventTime), at >= began.addingTimeInterval(-1)
                            else { return nil }
                            return at
                        }
                        guard let first = refused.min() else { return nil }
                        latest = max(latest ?? first, first)
                    }
                    return latest
                }
                print(
                    "revocation (\(storage.rawValue)): the till's sessions ended \(Int(ended.timeIntervalSince(returned) * 1000)) ms after `admin device revoke` returned (\(Int(ended.timeIntervalSince(began) * 1000)) ms after it began; the command took \(elapsed))"
                )
                // The application goes on writing while the device is locked out.
                let writtenAtEnd = writes.value.ids.count
                try await eventually("20 more rows written offline", timeout: .seconds(60)) { writes.value.ids.count >= writtenAtEnd + 20 }
                writes.update { $0.stop = true }
                try await group.waitForAll()
            }

            #expect(!till.hasExited)
            #expect(till.log.contains("203"), "\(till.log.suffix(3000))")
            for instance in 0...last {
                let device = try await cluster.enrolledDevices(instance: instance).first { $0["device_id"]?.stringValue == deviceID }
                #expect(device?["state"]?.stringValue == "revoked", "\(String(describing: device))")
            }
            // Nothing lost on the device: every row written is in its store; the unsent ones
            // are still in its change log.
            let written = Set(writes.value.ids)
            let local = Set(try await till.sql("store-7", "SELECT id FROM orders").split(separator: "\n").map(String.init))
            #expect(local == written, "\(written.subtracting(local).sorted()) lost from the store")
            let unsent = Set(try await till.sql("store-7", "SELECT pk FROM _tether_log WHERE tbl = 'orders'").split(separator: "\n").map(String.init))
            let acknowledged = written.subtracting(unsent)
            #expect(!acknowledged.isEmpty && !unsent.isEmpty, "rows acknowledged before the revoke, rows written after it kept unsent")
            #expect(try await till.status("store-7")?["unsynced_changes"]?.numberValue ?? 0 > 0)
            // Nothing acknowledged lost on the server.
            try await hq.waitSynced("store-7")
            let server = Set(try await hq.sql("store-7", "SELECT id FROM orders").split(separator: "\n").map(String.init))
            #expect(acknowledged.isSubset(of: server), "acknowledged but not on the server: \(acknowledged.subtracting(server).sorted())")
            #expect(server.isSubset(of: written))
            print("revocation (\(storage.rawValue)): \(written.count) rows written, \(acknowledged.count) acknowledged, \(server.count) on the server, \(unsent.count) kept unsent")

            // The other instance refuses the device too (it was revoked there, not here).
            if last > 0 {
                let moved = Date()
                try till.reconfigure { $0.url = cluster.url(instance: last) }
                try await till.reload()
                try await eventually("the other instance refuses the till (203)", timeout: .seconds(60), pollInterval: .milliseconds(100)) {
                    try await till.events("sync-error", partition: "store-7").contains { event in
                        event["code"]?.numberValue == 203 && (event["at"]?.stringValue.flatMap(Self.eventTime) ?? .distantPast) > moved
                    }
                }
                #expect(till.log.contains("connected to \(cluster.url(instance: last))"), "\(till.log.suffix(3000))")
                #expect(Set(try await till.sql("store-7", "SELECT id FROM orders").split(separator: "\n").map(String.init)) == written)
            }
        }
    }

    /// Inserts rows into `partition` one `sqlite3` at a time, as fast as they go, until told to
    /// stop or `limit` has passed.
    static func writeSteadily(_ agent: ClusterAgent, _ partition: String, into writes: AwaitableState<Writes>, for limit: Duration) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        var n = 0
        while !writes.value.stop, clock.now < deadline {
            n += 1
            let id = "w-" + String(n + 100_000).dropFirst()
            try await agent.sql(partition, "INSERT INTO orders (id, customer, total) VALUES ('\(id)', '\(agent.name)', \(n))")
            writes.update { $0.ids.append(id) }
        }
    }

    /// An event's `at` (`2026-11-29T09:30:00.123Z`).
    static func eventTime(_ text: String) -> Date? {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return format.date(from: text)
    }
}
