import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// The ledger's report history (issue 49), the same on both storages: one sample per entry and
/// 10-minute bucket holding the bucket's most unsynced changes and its last report, by device
/// over every user and partition, pruned past its retention.
extension StorageConformanceTests {
    @Test(arguments: StorageBackend.allCases)
    func eachReportLandsInItsBucketKeepingTheMostUnsyncedChanges(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            // The bucket holding `now` (1_700_000_000 is 200 s into its bucket).
            let start = Date(timeIntervalSince1970: TimeInterval(DeviceHistory.bucket(of: now)))
            func report(_ offset: Double, unsynced: Int64, state: String = "syncing", partition: String = "p", user: String = "alice") -> DeviceLedgerEntry {
                var entry = Self.entry("d1", partition, state: state, user: user, at: start.addingTimeInterval(offset))
                entry.unsyncedChanges = unsynced
                entry.lastUploadAt = start.addingTimeInterval(offset - 30)
                return entry
            }
            // Three reports in the first bucket (the most in the middle), one in the next, one
            // for another partition, one under another user, one of another device.
            try await storage.recordDeviceReports([report(0, unsynced: 3)])
            try await storage.recordDeviceReports([report(200, unsynced: 9)])
            try await storage.recordDeviceReports([report(599, unsynced: 1, state: "synced")])
            try await storage.recordDeviceReports([report(600, unsynced: 2), report(10, unsynced: 4, partition: "q")])
            try await storage.recordDeviceReports([report(20, unsynced: 5, user: "bob")])
            var other = Self.entry("d2", "p", at: start)
            other.unsyncedChanges = 100
            try await storage.recordDeviceReports([other])
            let history = try await storage.deviceHistory(deviceID: "d1", since: start.addingTimeInterval(-3600))
            let bucket = Int64(start.timeIntervalSince1970)
            #expect(history == [
                DeviceHistorySample(
                    user: "alice", deviceID: "d1", partition: "p", bucketStart: bucket, maxUnsyncedChanges: 9,
                    lastUploadAt: start.addingTimeInterval(569), state: "synced", reportedAt: start.addingTimeInterval(599)),
                DeviceHistorySample(
                    user: "bob", deviceID: "d1", partition: "p", bucketStart: bucket, maxUnsyncedChanges: 5,
                    lastUploadAt: start.addingTimeInterval(-10), state: "syncing", reportedAt: start.addingTimeInterval(20)),
                DeviceHistorySample(
                    user: "alice", deviceID: "d1", partition: "p", bucketStart: bucket + 600, maxUnsyncedChanges: 2,
                    lastUploadAt: start.addingTimeInterval(570), state: "syncing", reportedAt: start.addingTimeInterval(600)),
                DeviceHistorySample(
                    user: "alice", deviceID: "d1", partition: "q", bucketStart: bucket, maxUnsyncedChanges: 4,
                    lastUploadAt: start.addingTimeInterval(-20), state: "syncing", reportedAt: start.addingTimeInterval(10)),
            ].sorted { ($0.partition, $0.user, $0.bucketStart) < ($1.partition, $1.user, $1.bucketStart) })
            // `since` drops the buckets before its own.
            #expect(try await storage.deviceHistory(deviceID: "d1", since: start.addingTimeInterval(601)).map(\.bucketStart) == [bucket + 600])
            #expect(try await storage.deviceHistory(deviceID: "nobody", since: start).isEmpty)
            // Pruning removes the buckets that started before the cutoff's, every device's.
            #expect(try await storage.expireDeviceHistory(before: start.addingTimeInterval(700)) == 4)
            #expect(try await storage.deviceHistory(deviceID: "d1", since: .distantPast).map(\.bucketStart) == [bucket + 600])
            #expect(try await storage.deviceHistory(deviceID: "d2", since: .distantPast).isEmpty)
            #expect(try await storage.expireDeviceHistory(before: start.addingTimeInterval(700)) == 0)
        }
    }

    /// The intake's admitted entries land in the history too; refused ones do not.
    @Test(arguments: StorageBackend.allCases)
    func onlyAdmittedEntriesLandInTheHistory(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            try await makePartitions(storage, "p")
            let report = ["p", "q"].map { Self.entry("d1", $0, user: "u", at: now) }
            _ = try await storage.admitDeviceReport(report, granted: ["p", "q"], limits: Self.roomy)
            #expect(try await storage.deviceHistory(deviceID: "d1", since: now.addingTimeInterval(-3600)).map(\.partition) == ["p"])
        }
    }
}
