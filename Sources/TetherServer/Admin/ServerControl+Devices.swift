import Foundation
import HTTPTypes
import Synchronization

extension ServerControl {
    /// The device ledger, most recently reported first, the first ``legacyLimit`` entries:
    /// `partition` (a name or glob) and `state` (a state or health class) filter, `staleSeconds`
    /// keeps the entries not reported for that long.
    package func devices(partition: String?, state: String?, staleSeconds: Int?) async throws -> AdminAPI.Devices {
        let at = now()
        let query = DeviceLedgerPageQuery(
            filter: DeviceLedgerFilter(partition: partition, state: state, reportedBefore: staleSeconds.map { at - TimeInterval($0) }),
            sort: .seen, descending: true, limit: Self.legacyLimit)
        // A state that is none lists nothing here, as it did (the console's form). No counts:
        // this list has none.
        let page = try await ledgerPage(query, at: at, checked: false, counts: false)
        return AdminAPI.Devices(devices: page.devices, at: page.at, truncated: page.truncated)
    }

    /// What ``devices(partition:state:staleSeconds:)`` lists at most (a `GET /admin/devices`
    /// asking for no page).
    package static let legacyLimit = 10_000

    /// One page of the device ledger (docs/server.md, "Device ledger"); stale and wedged by
    /// `[devices] stale_after_seconds` and `wedged_after_seconds`.
    /// `legacy`: a `GET /admin/devices` asking for no page, which may list ``legacyLimit``.
    /// `counts`: whether the page carries the counts around it (by state and health class, and
    /// the total): over a large selection they may be a few seconds old
    /// (``DeviceLedgerCountCache``); without them (a caller that shows none) they are zero.
    package func devicePage(_ query: DeviceLedgerPageQuery, legacy: Bool = false, counts: Bool = true) async throws -> AdminAPI.DevicePage {
        guard (1...(legacy ? Self.legacyLimit : DeviceLedgerPageQuery.maxLimit)).contains(query.limit) else {
            throw AdminError(.badRequest, "limit must be 1 to \(DeviceLedgerPageQuery.maxLimit)", hint: "page through with offset or after")
        }
        return try await ledgerPage(query, at: now(), counts: counts)
    }

    /// The keys of the entries `filter` selects (a remote action's selection), at most `limit`.
    package func deviceKeys(matching filter: DeviceLedgerFilter, limit: Int) async throws -> [DeviceLedgerKey] {
        try Self.check(filter)
        let (staleBefore, wedgedBefore) = ledgerCutoffs(at: now())
        return try await storage.ledger.deviceKeys(matching: filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore, limit: limit)
    }

    /// How many devices `filter` selects (the confirmation of a selection).
    package func countDevices(matching filter: DeviceLedgerFilter) async throws -> Int {
        try Self.check(filter)
        let (staleBefore, wedgedBefore) = ledgerCutoffs(at: now())
        return try await storage.ledger.countDevices(matching: filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
    }

    /// The report history of the device `id`, every user and partition, over the retention.
    package func deviceHistory(id: String) async throws -> AdminAPI.DeviceHistory {
        let at = now()
        let samples = try await storage.ledger.deviceHistory(deviceID: id, since: at - TimeInterval(DeviceHistory.retentionSeconds))
        return AdminAPI.DeviceHistory(
            deviceID: id, at: AdminAPI.Device.timestamp(at), bucketSeconds: DeviceHistory.bucketSeconds,
            retentionSeconds: DeviceHistory.retentionSeconds, samples: samples.map(AdminAPI.DeviceHistory.Sample.init))
    }

    /// The stale and wedged cutoffs at `at`.
    func ledgerCutoffs(at: Date) -> (staleBefore: Date, wedgedBefore: Date) {
        let settings = configuration.devices
        return (at - TimeInterval(settings.staleAfterSeconds), at - TimeInterval(settings.wedgedAfterSeconds))
    }

    private func ledgerPage(_ query: DeviceLedgerPageQuery, at: Date, checked: Bool = true, counts: Bool) async throws -> AdminAPI.DevicePage {
        if checked { try Self.check(query.filter) }
        guard query.offset >= 0 else { throw AdminError(.badRequest, "offset must not be negative") }
        let (staleBefore, wedgedBefore) = ledgerCutoffs(at: at)
        let entries = try await storage.ledger.devicePageEntries(query, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
        let tally = counts ? try await ledgerCounts(query.filter.withoutState, at: at) : DeviceLedgerCountRows()
        let page = tally.page(query, entries: entries, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
        return AdminAPI.DevicePage(page, query: query, now: at, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
    }

    /// The counts of `filter` (a filter without its state) at `at`: those kept if fresh, else
    /// counted now (and kept if the selection is large).
    private func ledgerCounts(_ filter: DeviceLedgerFilter, at: Date) async throws -> DeviceLedgerCountRows {
        if let kept = ledgerCounts.withLock({ $0.counts(of: filter, at: at) }) { return kept }
        let (staleBefore, wedgedBefore) = ledgerCutoffs(at: at)
        let counts = try await storage.ledger.deviceCountRows(filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
        ledgerCounts.withLock { $0.keep(counts, of: filter, at: at) }
        return counts
    }

    static func check(_ filter: DeviceLedgerFilter) throws {
        if let state = filter.state, !DeviceLedgerFilter.stateNames.contains(state) {
            throw AdminError(
                .badRequest, "state \(state.debugDescription) is not a ledger state",
                hint: "one of \(DeviceLedgerFilter.stateNames.joined(separator: ", "))")
        }
    }
}
