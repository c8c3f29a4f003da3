import Foundation
import Testing
@testable import TetherServer

/// The page types' pure pieces: every sort ends with the entry's key (a total order), and a
/// cursor goes through its text and back, refusing another order or text it did not make.
@Suite struct DeviceLedgerPageTests {
    let entry = DeviceLedgerEntry(
        deviceID: "d/1+", deviceName: "Till \u{e9} \"x\"", user: "u", release: "r", partition: "p", state: "synced", unsyncedChanges: 3,
        reportedAt: Date(timeIntervalSince1970: 1_700_000_000.25))

    @Test(arguments: DeviceLedgerSort.allCases)
    func everySortIsTotal(_ sort: DeviceLedgerSort) {
        #expect(Set(sort.keys).isSuperset(of: [.user, .deviceID, .partition]))
        #expect(Set(sort.keys).count == sort.keys.count)
    }

    @Test func theHealthSortBreaksTiesByStalenessThenName() {
        #expect(DeviceLedgerSort.health.keys.prefix(3) == [.health, .reportedAt, .deviceName])
    }

    @Test func aCursorGoesThroughItsText() throws {
        let cursor = DeviceLedgerCursor(after: entry, sort: .name, descending: true, health: .erroring)
        #expect(!cursor.text.contains("+") && !cursor.text.contains("/") && !cursor.text.contains("="))
        #expect(try DeviceLedgerCursor.parse(cursor.text, sort: .name, descending: true) == cursor)
        #expect(throws: DeviceLedgerCursor.Invalid.otherOrder) { try DeviceLedgerCursor.parse(cursor.text, sort: .name, descending: false) }
        #expect(throws: DeviceLedgerCursor.Invalid.otherOrder) { try DeviceLedgerCursor.parse(cursor.text, sort: .seen, descending: true) }
        #expect(throws: DeviceLedgerCursor.Invalid.malformed) { try DeviceLedgerCursor.parse("not a cursor", sort: .name, descending: true) }
        #expect(throws: DeviceLedgerCursor.Invalid.malformed) { try DeviceLedgerCursor.parse("e30", sort: .name, descending: true) }
        #expect(throws: DeviceLedgerCursor.Invalid.malformed) {
            try DeviceLedgerCursor.parse(String(repeating: "A", count: 5000), sort: .name, descending: true)
        }
    }

    @Test func countRowsAddUpToTotalsForEveryKindOfState() {
        var rows = DeviceLedgerCountRows()
        rows.add(state: "synced", health: 4, entries: 5, stale: 0, erroring: 0)
        rows.add(state: "synced", health: 3, entries: 2, stale: 2, erroring: 0)
        rows.add(state: "syncing", health: 0, entries: 1, stale: 1, erroring: 1)
        rows.add(state: "reset-pending", health: 1, entries: 3, stale: 1, erroring: 2)
        #expect(rows.byState == ["synced": 7, "syncing": 1, "reset-pending": 3])
        #expect(rows.byHealth == ["healthy": 5, "stale": 2, "wedged": 1, "reset-pending": 3])
        #expect(rows.total(state: nil) == 11 && rows.total(state: "synced") == 7 && rows.total(state: "offline") == 0)
        #expect(rows.total(state: "unhealthy") == 6 && rows.total(state: "wedged") == 1)
        #expect(rows.total(state: "stale") == 4 && rows.total(state: "erroring") == 3)
    }

    @Test func aPageSaysWhereTheNextOneStarts() throws {
        let rows = DeviceLedgerCountRows()
        let stale = Date(timeIntervalSince1970: 0)
        let full = rows.page(DeviceLedgerPageQuery(limit: 2, offset: 4), entries: [entry, entry, entry], staleBefore: stale, wedgedBefore: stale)
        #expect(full.entries.count == 2 && full.nextOffset == 6 && full.nextCursor?.deviceID == entry.deviceID)
        let last = rows.page(DeviceLedgerPageQuery(limit: 2), entries: [entry, entry], staleBefore: stale, wedgedBefore: stale)
        #expect(last.nextOffset == nil && last.nextCursor == nil)
        let cursor = DeviceLedgerCursor(after: entry, sort: .health, descending: false, health: .healthy)
        let after = rows.page(DeviceLedgerPageQuery(limit: 1, cursor: cursor), entries: [entry, entry], staleBefore: stale, wedgedBefore: stale)
        #expect(after.nextOffset == nil && after.nextCursor == cursor)
    }
}
