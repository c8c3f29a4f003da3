import Foundation

extension ServerControl {
    /// The device ledger, most recently reported first: `partition` and `state` filter,
    /// `staleSeconds` keeps the entries not reported for that long.
    package func devices(partition: String?, state: String?, staleSeconds: Int?) async throws -> AdminAPI.Devices {
        let at = now()
        let limit = 10_000
        let entries = try await storage.ledger.devices(DeviceQuery(
            partition: partition, state: state, reportedBefore: staleSeconds.map { at - TimeInterval($0) }, limit: limit + 1))
        let settings = configuration.devices
        let staleBefore = at - TimeInterval(settings.staleAfterSeconds)
        let wedgedBefore = at - TimeInterval(settings.wedgedAfterSeconds)
        return AdminAPI.Devices(
            devices: entries.prefix(limit).map { AdminAPI.Device($0, now: at, staleBefore: staleBefore, wedgedBefore: wedgedBefore) },
            at: AdminAPI.Device.timestamp(at), truncated: entries.count > limit)
    }
}
