import Foundation

/// The ledger's report history (docs/server.md, "Device ledger"): for each entry, one sample
/// per ``bucketSeconds`` it reported in, holding the bucket's most unsynced changes and its
/// last report's upload time and state, kept ``retentionSeconds``. Each admitted report
/// writes one upsert per entry; housekeeping removes the samples past retention.
package enum DeviceHistory {
    /// 10 minutes.
    package static let bucketSeconds: Int64 = 600
    /// 7 days.
    package static let retentionSeconds: Int64 = 7 * 86_400
    /// The most samples one device's history answers with (partitions × buckets).
    package static let maxSamples = 20_000

    /// The start of the bucket `date` falls in, in seconds since 1970.
    package static func bucket(of date: Date) -> Int64 {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        return seconds - ((seconds % bucketSeconds) + bucketSeconds) % bucketSeconds
    }

    /// The sample an entry's report makes.
    package static func sample(of entry: DeviceLedgerEntry) -> DeviceHistorySample {
        DeviceHistorySample(
            user: entry.user, deviceID: entry.deviceID, partition: entry.partition, bucketStart: bucket(of: entry.reportedAt),
            maxUnsyncedChanges: entry.unsyncedChanges, lastUploadAt: entry.lastUploadAt, state: entry.state, reportedAt: entry.reportedAt)
    }

    /// What a bucket holds after `sample` lands in it (`existing`: what it held): the most
    /// unsynced changes of both, the rest from the later report.
    package static func merge(_ existing: DeviceHistorySample?, _ sample: DeviceHistorySample) -> DeviceHistorySample {
        guard let existing else { return sample }
        var merged = sample
        merged.maxUnsyncedChanges = max(existing.maxUnsyncedChanges, sample.maxUnsyncedChanges)
        return merged
    }
}

/// One bucket of one ledger entry's history.
package struct DeviceHistorySample: Sendable, Hashable, Codable {
    package var user: String
    package var deviceID: String
    package var partition: String
    /// Seconds since 1970 of the bucket's start (a multiple of ``DeviceHistory/bucketSeconds``).
    package var bucketStart: Int64
    /// The most unsynced changes reported in the bucket.
    package var maxUnsyncedChanges: Int64
    /// The bucket's last report's last acknowledged upload.
    package var lastUploadAt: Date?
    /// The bucket's last report's state.
    package var state: String
    /// The bucket's last report.
    package var reportedAt: Date

    package init(
        user: String, deviceID: String, partition: String, bucketStart: Int64, maxUnsyncedChanges: Int64, lastUploadAt: Date?,
        state: String, reportedAt: Date
    ) {
        self.user = user
        self.deviceID = deviceID
        self.partition = partition
        self.bucketStart = bucketStart
        self.maxUnsyncedChanges = maxUnsyncedChanges
        self.lastUploadAt = lastUploadAt
        self.state = state
        self.reportedAt = reportedAt
    }
}
