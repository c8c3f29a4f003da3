import Foundation

extension AdminAPI {
    /// `GET /admin/devices`: a page of the device ledger (docs/server.md, "Device ledger"). Its
    /// `devices`, `at` and `truncated` are those of ``Devices``: an older client reads it as one.
    package struct DevicePage: Codable, Sendable, Hashable {
        package var devices: [Device]
        /// When the server answered (RFC 3339, UTC): the ages are counted to it.
        package var at: String
        /// Whether more entries match than this page holds (a next page exists).
        package var truncated: Bool
        /// Entries matching the filter.
        package var total: Int
        /// Over the filter without its state: entries by state, by health class (wedged,
        /// reset-pending, erroring, stale, healthy: each entry in its first), and how many are
        /// stale, wedged and erroring whatever their class.
        package var countsByState: [String: Int]
        package var countsByHealth: [String: Int]
        package var stale: Int
        package var wedged: Int
        package var erroring: Int
        package var sort: String
        package var descending: Bool
        package var limit: Int
        package var offset: Int
        /// The next page: `offset=` this, or `after=` the cursor; nil on the last page (the
        /// offset is nil too for a page asked with a cursor).
        package var nextOffset: Int?
        package var nextCursor: String?
        /// Every identity, added by `tether-server admin devices`; the route leaves it out.
        package var identities: [Identity]? = nil

        enum CodingKeys: String, CodingKey {
            case devices, at, truncated, total, stale, wedged, erroring, sort, descending, limit, offset, identities
            case countsByState = "counts_by_state"
            case countsByHealth = "counts_by_health"
            case nextOffset = "next_offset"
            case nextCursor = "next_cursor"
        }

        /// The page's rows as the list without pages holds them.
        package var list: Devices { Devices(devices: devices, at: at, truncated: truncated) }

        package init(_ page: DeviceLedgerPage, query: DeviceLedgerPageQuery, now: Date, staleBefore: Date, wedgedBefore: Date) {
            devices = page.entries.map { Device($0, now: now, staleBefore: staleBefore, wedgedBefore: wedgedBefore) }
            at = Device.timestamp(now)
            truncated = page.nextCursor != nil
            total = page.total
            countsByState = page.countsByState
            countsByHealth = page.countsByHealth
            stale = page.stale
            wedged = page.wedged
            erroring = page.erroring
            sort = query.sort.rawValue
            descending = query.descending
            limit = query.limit
            offset = query.cursor == nil ? query.offset : 0
            nextOffset = page.nextOffset
            nextCursor = page.nextCursor?.text
        }
    }

    /// `GET /admin/devices/{id}/history`: a device's report history (docs/server.md, "Device
    /// ledger"), one sample per partition and 10-minute bucket it reported in, 7 days at most.
    package struct DeviceHistory: Codable, Sendable, Hashable {
        package var deviceID: String
        package var at: String
        package var bucketSeconds: Int64
        package var retentionSeconds: Int64
        package var samples: [Sample]

        package struct Sample: Codable, Sendable, Hashable {
            package var user: String
            package var partition: String
            /// The bucket's start (RFC 3339, UTC).
            package var bucketStart: String
            package var maxUnsyncedChanges: Int64
            /// The bucket's last report: its state, when it came, its last acknowledged upload,
            /// and how long before the report that upload was (nil: none acknowledged).
            package var state: String
            package var reportedAt: String
            package var lastUploadAt: String?
            package var secondsSinceUpload: Int64?

            enum CodingKeys: String, CodingKey {
                case user, partition, state
                case bucketStart = "bucket_start"
                case maxUnsyncedChanges = "max_unsynced_changes"
                case reportedAt = "reported_at"
                case lastUploadAt = "last_upload_at"
                case secondsSinceUpload = "seconds_since_upload"
            }

            package init(_ sample: DeviceHistorySample) {
                user = sample.user
                partition = sample.partition
                bucketStart = Device.timestamp(Date(timeIntervalSince1970: TimeInterval(sample.bucketStart)))
                maxUnsyncedChanges = sample.maxUnsyncedChanges
                state = sample.state
                reportedAt = Device.timestamp(sample.reportedAt)
                lastUploadAt = sample.lastUploadAt.map(Device.timestamp)
                secondsSinceUpload = sample.lastUploadAt.map { Int64(max(0, sample.reportedAt.timeIntervalSince($0)).rounded()) }
            }
        }

        enum CodingKeys: String, CodingKey {
            case at, samples
            case deviceID = "device_id"
            case bucketSeconds = "bucket_seconds"
            case retentionSeconds = "retention_seconds"
        }
    }
}
