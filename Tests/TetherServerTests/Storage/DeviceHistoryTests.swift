import Foundation
import Testing
@testable import TetherServer

/// The history's buckets: 10 minutes from the epoch, a sample per entry, the most unsynced
/// changes of a bucket kept.
@Suite struct DeviceHistoryTests {
    @Test(arguments: [(0.0, Int64(0)), (599.9, 0), (600, 600), (1_700_000_000, 1_699_999_800), (-1, -600), (-600, -600)])
    func aTimeFallsInTheBucketStartingAtTheTenMinutesBeforeIt(_ seconds: Double, _ bucket: Int64) {
        #expect(DeviceHistory.bucket(of: Date(timeIntervalSince1970: seconds)) == bucket)
    }

    @Test func aSampleTakesTheMostUnsyncedChangesAndTheLaterRest() {
        var entry = DeviceLedgerEntry(
            deviceID: "d", deviceName: "n", user: "u", release: "r", partition: "p", state: "syncing", unsyncedChanges: 7,
            lastUploadAt: Date(timeIntervalSince1970: 1_000), reportedAt: Date(timeIntervalSince1970: 1_250))
        let first = DeviceHistory.sample(of: entry)
        #expect(first.bucketStart == 1_200 && first.maxUnsyncedChanges == 7 && first.state == "syncing")
        entry.unsyncedChanges = 2
        entry.state = "synced"
        entry.reportedAt = Date(timeIntervalSince1970: 1_300)
        let merged = DeviceHistory.merge(first, DeviceHistory.sample(of: entry))
        #expect(merged.maxUnsyncedChanges == 7 && merged.state == "synced" && merged.reportedAt == entry.reportedAt)
        #expect(DeviceHistory.merge(nil, first) == first)
        #expect(DeviceHistory.retentionSeconds / DeviceHistory.bucketSeconds == 1_008)
    }
}
