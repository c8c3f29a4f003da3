import Foundation

// TEMPORARY (removed when issue-49-ledger merges): the ledger selection API that branch adds,
// over the old list, so that remote actions build and run before the merge.
package struct DeviceLedgerFilter: Sendable, Hashable {
    package var partition: String?
    package var state: String?
    package var reportedBefore: Date?
    package var deviceID: String?
    package var user: String?
    package var text: String?

    package init(
        partition: String? = nil, state: String? = nil, reportedBefore: Date? = nil, deviceID: String? = nil, user: String? = nil,
        text: String? = nil
    ) {
        self.partition = partition
        self.state = state
        self.reportedBefore = reportedBefore
        self.deviceID = deviceID
        self.user = user
        self.text = text
    }

    package static let stateNames = DeviceLedgerEntry.states

    func matches(_ entry: DeviceLedgerEntry) -> Bool {
        if let partition {
            if partition.hasSuffix("*") { if !entry.partition.hasPrefix(partition.dropLast()) { return false } } else if entry.partition != partition { return false }
        }
        if let state, entry.state != state { return false }
        if let reportedBefore, entry.reportedAt >= reportedBefore { return false }
        if let deviceID, entry.deviceID != deviceID { return false }
        if let user, entry.user != user { return false }
        if let text, !entry.deviceName.contains(text), !entry.deviceID.contains(text) { return false }
        return true
    }
}

package struct DeviceLedgerKey: Sendable, Hashable, Codable {
    package var user: String
    package var deviceID: String
    package var partition: String
    package var deviceName: String
}

extension DeviceLedgerStorage {
    func deviceKeys(matching filter: DeviceLedgerFilter, staleBefore: Date, wedgedBefore: Date, limit: Int) async throws -> [DeviceLedgerKey] {
        try await devices(DeviceQuery(limit: 1_000_000)).filter(filter.matches).prefix(limit).map {
            DeviceLedgerKey(user: $0.user, deviceID: $0.deviceID, partition: $0.partition, deviceName: $0.deviceName)
        }
    }

    func countDevices(matching filter: DeviceLedgerFilter, staleBefore: Date, wedgedBefore: Date) async throws -> Int {
        Set(try await devices(DeviceQuery(limit: 1_000_000)).filter(filter.matches).map { "\($0.user)\u{0}\($0.deviceID)" }).count
    }
}
