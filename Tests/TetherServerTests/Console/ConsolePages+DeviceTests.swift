import Foundation
import Testing
@testable import TetherServer

/// A device's page (``ConsolePages/device(_:id:identity:history:csrf:refresh:extra:moreEntries:)``):
/// a device with more ledger entries than one page holds says so and where the rest are.
@Suite struct ConsolePagesDeviceTests {
    static func entry(_ partition: String) -> AdminAPI.Device {
        AdminAPI.Device(
            DeviceLedgerEntry(deviceID: "d1", deviceName: "till-1", user: "u", release: "0.1.0", partition: partition, state: "synced", reportedAt: .now),
            now: .now, staleBefore: .distantPast, wedgedBefore: .distantPast)
    }

    @Test func aDeviceWithMoreEntriesThanThePageSaysSoAndWhereTheRestAre() {
        let entries = [Self.entry("p1"), Self.entry("p2")]
        let cut = ConsolePages.device(entries, id: "d1", moreEntries: true).text
        #expect(cut.contains("Only the first 2 entries of this device"))
        #expect(cut.contains("/admin/devices?device_id=d1&amp;sort=partition&amp;offset=2"))
        #expect(!ConsolePages.device(entries, id: "d1").text.contains("Only the first"), "all of them shown: nothing to say")
    }
}
