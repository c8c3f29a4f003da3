import Foundation
import TetherProtocol

/// The device ledger (docs/server.md, "Device ledger"): the last report of every device for
/// every partition it syncs, keyed by (user, device id, partition), kept by both storages,
/// shared by the instances of one PostgreSQL, bounded and expiring with the client files.
package protocol DeviceLedgerStorage: Sendable {
    /// Keeps `entries` as they are, each replacing the entry of its user, device and partition,
    /// with no check (the intake's write; tests); each also lands in its history bucket.
    func recordDeviceReports(_ entries: [DeviceLedgerEntry]) async throws
    /// Keeps what ``DeviceLedgerIntake`` admits of one report's `entries` (one user and device
    /// id, one per partition), reading its facts and writing in one transaction (on PostgreSQL
    /// under a lock of the user, so that the user's quota holds across instances). `granted`:
    /// the partitions of the entries the user has a grant on.
    func admitDeviceReport(
        _ entries: [DeviceLedgerEntry], granted: Set<String>, limits: DeviceLedgerIntake.Limits
    ) async throws -> DeviceLedgerIntake.Outcome
    /// The entries matching `query`, most recently reported first.
    func devices(_ query: DeviceQuery) async throws -> [DeviceLedgerEntry]
    /// Counts for the metrics: entries by state, stale and wedged ones.
    func deviceCounts(staleBefore: Date, wedgedBefore: Date) async throws -> DeviceCounts
    /// The entries of one page of `query` (``DeviceLedgerSQL/page(_:staleBefore:wedgedBefore:dialect:)``):
    /// up to `query.limit + 1`, the extra one saying that another page follows; `staleBefore`
    /// and `wedgedBefore` place each entry's health. Without the counts around it, which
    /// ``deviceCountRows(_:staleBefore:wedgedBefore:)`` gives (a page asks for them once per list).
    func devicePageEntries(_ query: DeviceLedgerPageQuery, staleBefore: Date, wedgedBefore: Date) async throws -> [DeviceLedgerEntry]
    /// The counts by state and health class of the entries matching `filter` (a page's filter
    /// without its state): a scan of those entries.
    func deviceCountRows(_ filter: DeviceLedgerFilter, staleBefore: Date, wedgedBefore: Date) async throws -> DeviceLedgerCountRows
    /// The keys of the entries matching `filter` (a remote action's selection), in key order, at most `limit`.
    func deviceKeys(matching filter: DeviceLedgerFilter, staleBefore: Date, wedgedBefore: Date, limit: Int) async throws -> [DeviceLedgerKey]
    /// How many devices (user and device id) have an entry matching `filter`.
    func countDevices(matching filter: DeviceLedgerFilter, staleBefore: Date, wedgedBefore: Date) async throws -> Int
    /// The history samples of the device `deviceID` (every user and partition) from `since`,
    /// by partition, user and time; at most ``DeviceHistory/maxSamples``.
    func deviceHistory(deviceID: String, since: Date) async throws -> [DeviceHistorySample]
    /// Removes the history samples of buckets that started before `cutoff`; returns how many went.
    func expireDeviceHistory(before cutoff: Date) async throws -> Int
    /// Removes the entries reported before `cutoff`; then, if more than `maxEntries` are left,
    /// the least recently reported entries of the users holding more than
    /// ``DeviceLedgerTrim/cap(entriesPerUser:maxEntries:)``. Returns how many went.
    func expireDevices(reportedBefore cutoff: Date, maxEntries: Int) async throws -> Int
}

extension DeviceLedgerStorage {
    /// One page of the entries matching `query.filter`, in its order, with the counts around it
    /// (``DeviceLedgerSQL``), read now: the page's entries and then its counts.
    package func devicePage(_ query: DeviceLedgerPageQuery, staleBefore: Date, wedgedBefore: Date) async throws -> DeviceLedgerPage {
        let entries = try await devicePageEntries(query, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
        let counts = try await deviceCountRows(query.filter.withoutState, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
        return counts.page(query, entries: entries, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
    }
}

/// One device's last report for one partition, with the server's times.
package struct DeviceLedgerEntry: Sendable, Hashable, Codable {
    package var deviceID: String
    package var deviceName: String
    /// The user whose token the report came with.
    package var user: String
    package var release: String
    package var partition: String
    package var state: String
    package var serverVersion: Int64
    package var clientFile: Int64
    package var unsyncedChanges: Int64
    /// Since when the oldest unsynced change has waited (nil: none unsynced).
    package var unsyncedSince: Date?
    /// When the server last acknowledged one of its uploads, as the device counted.
    package var lastUploadAt: Date?
    package var lastErrorCode: Int64?
    package var lastErrorAt: Date?
    /// Resets so far, by outcome.
    package var resets: [String: Int64]
    /// Why a reset waits for an operator or for access; nil when none does.
    package var pendingReset: String?
    /// When the server received the report.
    package var reportedAt: Date

    package init(
        deviceID: String, deviceName: String, user: String, release: String, partition: String, state: String,
        serverVersion: Int64 = 0, clientFile: Int64 = 0, unsyncedChanges: Int64 = 0, unsyncedSince: Date? = nil,
        lastUploadAt: Date? = nil, lastErrorCode: Int64? = nil, lastErrorAt: Date? = nil, resets: [String: Int64] = [:],
        pendingReset: String? = nil, reportedAt: Date
    ) {
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.user = user
        self.release = release
        self.partition = partition
        self.state = state
        self.serverVersion = serverVersion
        self.clientFile = clientFile
        self.unsyncedChanges = unsyncedChanges
        self.unsyncedSince = unsyncedSince
        self.lastUploadAt = lastUploadAt
        self.lastErrorCode = lastErrorCode
        self.lastErrorAt = lastErrorAt
        self.resets = resets
        self.pendingReset = pendingReset
        self.reportedAt = reportedAt
    }

    /// The entries of `report` as received at `now` from `user`: the device's ages become times,
    /// a state the server does not know becomes ``otherState``.
    package static func entries(of report: DeviceReport, user: String, receivedAt now: Date) -> [DeviceLedgerEntry] {
        report.entries.map { entry in
            DeviceLedgerEntry(
                deviceID: report.deviceID, deviceName: report.deviceName, user: user, release: report.release,
                partition: entry.partition, state: ledgerState(entry.state), serverVersion: entry.serverVersion, clientFile: entry.clientFile,
                unsyncedChanges: entry.unsyncedChanges, unsyncedSince: entry.unsyncedFor.map { now - TimeInterval($0) },
                lastUploadAt: entry.lastUploadAgo.map { now - TimeInterval($0) }, lastErrorCode: entry.lastError?.code,
                lastErrorAt: entry.lastError.map { now - TimeInterval($0.ago) }, resets: entry.resets,
                pendingReset: entry.pendingReset, reportedAt: now)
        }
    }

    /// The states an agent reports (docs/operations.md, "Partition states").
    package static let agentStates = ["connecting", "syncing", "synced", "offline", "paused", "reset-pending", "resetting", "stopped"]
    /// What the ledger keeps of a state it does not know (a newer agent's, or anything else a
    /// device sends), so that the states shown and counted are a fixed set.
    package static let otherState = "other"
    /// Every state an entry may have: ``agentStates`` and ``otherState``.
    package static let states = agentStates + [otherState]

    /// `reported` if an agent has that state, else ``otherState``.
    package static func ledgerState(_ reported: String) -> String {
        agentStates.contains(reported) ? reported : otherState
    }

    /// ``agentStates`` as an SQL list (`'connecting', …`), for the migrations of both storages.
    static var agentStatesSQL: String {
        agentStates.map { "'\($0)'" }.joined(separator: ", ")
    }

    /// ``isWedged(before:)`` in SQL, for both storages: `cutoff` is the placeholder of the
    /// cutoff, bound once and used twice (`?1` in SQLite, `$1` in PostgreSQL).
    static func wedgedCondition(cutoff: String) -> String {
        "unsynced > 0 AND unsynced_since IS NOT NULL AND unsynced_since < \(cutoff) AND coalesce(last_upload_at, 0) < \(cutoff)"
    }

    /// The keys of each user's entries beyond its `cap` most recently reported, in SQL for both
    /// storages (``DeviceLedgerTrim``): `cap` is the cap's placeholder.
    static func beyondCapKeys(cap: String) -> String {
        """
        SELECT user_name, device_id, partition FROM (
            SELECT user_name, device_id, partition,
                row_number() OVER (PARTITION BY user_name ORDER BY reported_at DESC, device_id, partition) AS rank
            FROM device_reports) AS ranked
        WHERE rank > \(cap)
        """
    }

    /// Whether it counts as wedged at `cutoff`: changes unsynced since before it, and no upload
    /// acknowledged since then either.
    package func isWedged(before cutoff: Date) -> Bool {
        guard unsyncedChanges > 0, let since = unsyncedSince, since < cutoff else { return false }
        return (lastUploadAt ?? .distantPast) < cutoff
    }

    /// The resets as stored (JSON object, keys sorted).
    var resetsJSON: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // A [String: Int64] always encodes.
        return (try? encoder.encode(resets)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// ``resetsJSON`` read back: text that does not decode is corrupt, not "no resets".
    static func resets(fromJSON text: String) throws(StorageError) -> [String: Int64] {
        do {
            return try JSONDecoder().decode([String: Int64].self, from: Data(text.utf8))
        } catch {
            throw .corrupt("device_reports")
        }
    }
}

/// Which ledger entries `admin devices` lists.
package struct DeviceQuery: Sendable, Hashable {
    package var partition: String?
    package var state: String?
    /// Only entries reported before this (`--stale`).
    package var reportedBefore: Date?
    package var limit: Int

    package init(partition: String? = nil, state: String? = nil, reportedBefore: Date? = nil, limit: Int = 10_000) {
        self.partition = partition
        self.state = state
        self.reportedBefore = reportedBefore
        self.limit = limit
    }
}

/// What the metrics show of the ledger: no device names, only counts.
package struct DeviceCounts: Sendable, Hashable {
    /// Entries (device and partition) by the state last reported.
    package var byState: [String: Int]
    /// Devices whose last report is older than the stale age.
    package var staleDevices: Int
    /// Entries whose unsynced changes have waited longer than the wedged age without an upload.
    package var wedged: Int

    package init(byState: [String: Int] = [:], staleDevices: Int = 0, wedged: Int = 0) {
        self.byState = byState
        self.staleDevices = staleDevices
        self.wedged = wedged
    }
}
