import Foundation

extension AdminAPI {
    /// `GET /admin/devices`: the device ledger (docs/server.md, "Device ledger").
    public struct Devices: Codable, Sendable, Hashable {
        public var devices: [Device]
        /// When the server answered (RFC 3339, UTC): the ages below are counted to it.
        public var at: String
        /// Whether the list was cut at the query's limit.
        public var truncated: Bool
    }

    /// One device's last report for one partition. Times are RFC 3339, UTC; ages in seconds.
    public struct Device: Codable, Sendable, Hashable {
        public var deviceID: String
        public var deviceName: String
        public var user: String
        public var release: String
        public var partition: String
        public var state: String
        public var serverVersion: Int64
        public var clientFile: Int64
        public var unsyncedChanges: Int64
        public var unsyncedSince: String?
        public var lastUploadAt: String?
        public var lastErrorCode: Int64?
        public var lastErrorAt: String?
        public var resets: [String: Int64]
        public var pendingReset: String?
        public var reportedAt: String
        /// Seconds from the last report to the answer.
        public var reportedSecondsAgo: Int64
        /// The report is older than `[devices] stale_after_seconds`.
        public var stale: Bool
        /// Its unsynced changes have waited longer than `[devices] wedged_after_seconds` with
        /// no upload acknowledged.
        public var wedged: Bool

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

        public init(_ entry: DeviceLedgerEntry, now: Date, staleBefore: Date, wedgedBefore: Date) {
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
        public static func timestamp(_ date: Date) -> String { date.formatted(.iso8601) }
    }
}
