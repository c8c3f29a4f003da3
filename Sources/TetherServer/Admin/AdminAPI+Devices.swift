import Foundation

extension AdminAPI {
    /// `GET /admin/devices`: the device ledger (docs/server.md, "Device ledger").
    package struct Devices: Codable, Sendable, Hashable {
        package var devices: [Device]
        /// When the server answered (RFC 3339, UTC): the ages below are counted to it.
        package var at: String
        /// Whether the list was cut at the query's limit.
        package var truncated: Bool
        /// Every identity (enrolled devices and `[[user]]`s), in name order: added by
        /// `tether-server admin devices` from `GET /admin/identities`; the route leaves it out.
        package var identities: [Identity]? = nil
    }

    /// One device's last report for one partition. Times are RFC 3339, UTC; ages in seconds.
    package struct Device: Codable, Sendable, Hashable {
        package var deviceID: String
        package var deviceName: String
        package var user: String
        package var release: String
        package var partition: String
        package var state: String
        package var serverVersion: Int64
        package var clientFile: Int64
        package var unsyncedChanges: Int64
        package var unsyncedSince: String?
        package var lastUploadAt: String?
        package var lastErrorCode: Int64?
        package var lastErrorAt: String?
        package var resets: [String: Int64]
        package var pendingReset: String?
        package var reportedAt: String
        /// Seconds from the last report to the answer.
        package var reportedSecondsAgo: Int64
        /// The report is older than `[devices] stale_after_seconds`.
        package var stale: Bool
        /// Its unsynced changes have waited longer than `[devices] wedged_after_seconds` with
        /// no upload acknowledged.
        package var wedged: Bool

        enum CodingKeys: String, CodingKey {
            case user, release, partition, state, resets, stale, wedged
            case deviceID = "device_id"
            case deviceName = "device_name"
            case serverVersion = "server_version"
            case clientFile = "client_file"
            case unsyncedChanges = "unsynced_changes"
            case unsyncedSince = "unsynced_since"
            case lastUploadAt = "last_upload_at"
            case lastErrorCode = "last_error_code"
            case lastErrorAt = "last_error_at"
            case pendingReset = "pending_reset"
            case reportedAt = "reported_at"
            case reportedSecondsAgo = "reported_seconds_ago"
        }

        package init(_ entry: DeviceLedgerEntry, now: Date, staleBefore: Date, wedgedBefore: Date) {
            deviceID = entry.deviceID
            deviceName = entry.deviceName
            user = entry.user
            release = entry.release
            partition = entry.partition
            state = entry.state
            serverVersion = entry.serverVersion
            clientFile = entry.clientFile
            unsyncedChanges = entry.unsyncedChanges
            unsyncedSince = entry.unsyncedSince.map(Self.timestamp)
            lastUploadAt = entry.lastUploadAt.map(Self.timestamp)
            lastErrorCode = entry.lastErrorCode
            lastErrorAt = entry.lastErrorAt.map(Self.timestamp)
            resets = entry.resets
            pendingReset = entry.pendingReset
            reportedAt = Self.timestamp(entry.reportedAt)
            reportedSecondsAgo = Int64(max(0, now.timeIntervalSince(entry.reportedAt)).rounded())
            stale = entry.reportedAt < staleBefore
            wedged = entry.isWedged(before: wedgedBefore)
        }

        /// RFC 3339, UTC (as the heal records give times).
        package static func timestamp(_ date: Date) -> String { date.formatted(.iso8601) }
    }
}
