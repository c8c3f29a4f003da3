import Foundation
import HTTPTypes
import Testing
import TetherProtocol
@testable import TetherServer

/// The device lists and a device's page over a ledger larger than a page, in process
/// (``ConsoleRoutesTests/withConsole(secure:_:)``): unhealthy first, counts per state that
/// filter, pages that reach the end, a device beyond the first pages, its history's charts.
@Suite struct ConsolePagesDevicesTests {
    /// 250 synced tills one minute apart, 3 wedged, 2 waiting for a reset, one unseen for 10 days.
    static func fleet(_ c: ConsoleRoutesTests.Console) async throws {
        let now = c.fixture.clock.date
        var entries = (0..<250).map { i in
            DeviceLedgerEntry(
                deviceID: "id-\(i)", deviceName: "till-\(i)", user: "pos", release: "1.0", partition: "store-\(i % 5)", state: "synced",
                lastUploadAt: now - 60, reportedAt: now - TimeInterval(i * 60))
        }
        for i in 0..<3 {
            entries[10 + i].unsyncedChanges = 7
            entries[10 + i].unsyncedSince = now - 3600
            entries[10 + i].lastUploadAt = now - 3600
        }
        for i in 0..<2 { entries[20 + i].state = "reset-pending" }
        entries.append(
            DeviceLedgerEntry(
                deviceID: "id-stalest", deviceName: "till-stalest", user: "pos", release: "1.0", partition: "store-1", state: "synced",
                reportedAt: now - 10 * 86_400))
        // An earlier report of till-1: two samples for its charts.
        var earlier = entries[1]
        earlier.reportedAt = now - 700
        earlier.unsyncedChanges = 40
        try await c.fixture.storage.recordDeviceReports([earlier])
        try await c.fixture.storage.recordDeviceReports(entries)
    }

    static func rows(_ page: String) -> [String] {
        page.components(separatedBy: "<tr").dropFirst(2).map { String($0.prefix(while: { $0 != "\n" })) }
    }

    @Test func theListPutsUnhealthyDevicesFirstWithCountsThatFilter() async throws {
        try await ConsoleRoutesTests.withConsole { c in
            try await Self.fleet(c)
            let (cookie, _) = c.signedIn()
            let (status, _, page) = try await c.get("/console/devices", headers: cookie)
            #expect(status == .ok)
            #expect(page.contains("251 device partitions, 1–100 shown"))
            let rows = Self.rows(page)
            #expect(rows.count == 100)
            #expect(rows.prefix(3).allSatisfy { $0.contains("class=\"wedged\"") }, "wedged first")
            #expect(rows[3...4].allSatisfy { $0.contains("reset-pending") }, "then the resets waiting")
            #expect(rows[5].contains("till-stalest") && rows[5].contains("10 d ago"), "then the stale")
            #expect(page.contains("wedged <strong>3</strong>") && page.contains("reset-pending <strong>2</strong>") && page.contains("stale <strong>1</strong>"))
            #expect(page.contains("href=\"/console/devices?state=wedged\"") && page.contains("href=\"/console/devices?offset=100\" rel=\"next\""))
            let (_, _, wedged) = try await c.get("/console/devices?state=wedged", headers: cookie)
            #expect(Self.rows(wedged).count == 3 && wedged.contains("3 device partitions"))
        }
    }

    @Test func pagesReachTheEndAndSortHeadersKeepTheFilter() async throws {
        try await ConsoleRoutesTests.withConsole { c in
            try await Self.fleet(c)
            let (cookie, _) = c.signedIn()
            let (_, _, last) = try await c.get("/console/devices?sort=seen&desc=1&offset=200", headers: cookie)
            #expect(Self.rows(last).count == 51 && Self.rows(last).last?.contains("till-stalest") == true)
            #expect(last.contains("rel=\"prev\"") && !last.contains("rel=\"next\""))
            let (_, _, glob) = try await c.get("/console/devices?partition=store-1&sort=name", headers: cookie)
            #expect(glob.contains("51 device partitions"))
            #expect(glob.contains("href=\"/console/devices?partition=store-1&amp;sort=name&amp;desc=1\""), "the current header reverses, the filter kept")
            let (_, _, partition) = try await c.get("/console/partitions", headers: cookie)
            #expect(partition.contains("Partitions"))
        }
    }

    @Test func aDevicePageReadsThatDeviceAndDrawsItsHistory() async throws {
        try await ConsoleRoutesTests.withConsole { c in
            try await Self.fleet(c)
            let (cookie, _) = c.signedIn()
            let (_, _, stalest) = try await c.get("/console/devices/id-stalest", headers: cookie)
            #expect(stalest.contains("<h1>Device till-stalest</h1>") && stalest.contains("10 d ago"))
            let (_, _, page) = try await c.get("/console/devices/id-1?refresh=30", headers: cookie)
            #expect(page.contains("<meta http-equiv=\"refresh\" content=\"30\">"))
            #expect(page.contains("<h2>History</h2>") && page.contains("<svg class=\"chart\"") && page.contains("<polyline"))
            #expect(page.contains("Unsynced changes of store-1: highest 40"))
            #expect(page.contains("The samples of store-1 as a table"))
            let (_, _, missing) = try await c.get("/console/devices/nobody", headers: cookie)
            #expect(missing.contains("No device has the id"))
        }
    }
}
