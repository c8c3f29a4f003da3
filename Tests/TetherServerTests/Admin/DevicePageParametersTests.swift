import Foundation
import Testing
@testable import TetherServer

/// `GET /admin/devices`'s parameters: the list as before without paging ones, a page with them,
/// and a clear refusal of what does not read.
@Suite struct DevicePageParametersTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func withoutPagingParametersTheListIsAsBefore() throws {
        let (query, legacy) = try DevicePageParameters.query(["partition": "store-*", "state": "synced", "stale_seconds": "60"], now: now)
        #expect(legacy)
        #expect(query == DeviceLedgerPageQuery(
            filter: DeviceLedgerFilter(partition: "store-*", state: "synced", reportedBefore: now - 60), sort: .seen, descending: true,
            limit: ServerControl.legacyLimit))
    }

    @Test func pagingParametersMakeAPage() throws {
        let (query, legacy) = try DevicePageParameters.query(
            ["sort": "unsynced", "desc": "true", "limit": "50", "page": "3", "user": "u", "device_id": "d", "q": "till"], now: now)
        #expect(!legacy)
        #expect(query == DeviceLedgerPageQuery(
            filter: DeviceLedgerFilter(deviceID: "d", user: "u", text: "till"), sort: .unsynced, descending: true, limit: 50, offset: 100))
        let (defaults, _) = try DevicePageParameters.query(["offset": "7"], now: now)
        #expect(defaults == DeviceLedgerPageQuery(sort: .health, descending: false, limit: 100, offset: 7))
        let entry = DeviceLedgerEntry(deviceID: "d", deviceName: "n", user: "u", release: "r", partition: "p", state: "synced", reportedAt: now)
        let cursor = DeviceLedgerCursor(after: entry, sort: .name, descending: false, health: .healthy)
        let (after, _) = try DevicePageParameters.query(["sort": "name", "after": cursor.text], now: now)
        #expect(after.cursor == cursor)
    }

    @Test(arguments: [
        ["sort": "size"], ["desc": "maybe"], ["limit": "0"], ["limit": "501"], ["offset": "-1"], ["page": "0"], ["page": "2", "offset": "3"],
        ["after": "x"], ["sort": "seen", "after": DeviceLedgerCursor(
            after: DeviceLedgerEntry(deviceID: "d", deviceName: "n", user: "u", release: "r", partition: "p", state: "s", reportedAt: .now),
            sort: .name, descending: false, health: .healthy).text],
        ["stale_seconds": "soon"],
    ])
    func whatDoesNotReadIsABadRequest(_ parameters: [String: String]) {
        #expect(throws: AdminError.self) { try DevicePageParameters.query(parameters, now: now) }
    }
}
