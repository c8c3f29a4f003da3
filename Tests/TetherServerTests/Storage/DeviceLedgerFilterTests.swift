import Foundation
import Testing
@testable import TetherServer

/// The ledger filter's pure pieces: globs, their SQL forms, ASCII case folding, health classes.
@Suite struct DeviceLedgerFilterTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test(arguments: [
        ("store-*", "store-17", true), ("store-*", "store-", true), ("store-*", "store", false), ("*", "", true),
        ("store-?", "store-1", true), ("store-?", "store-12", false), ("*-*-?", "a-b-c", true), ("a*b*c", "abxbc", true),
        ("a*b*c", "abxb", false), ("store_1", "store-1", false), ("store%", "store-1", false), ("[a]", "a", false),
        ("[a]", "[a]", true), ("caf?", "caf\u{e9}", true), ("**x", "x", true), ("", "", true), ("", "a", false),
    ])
    func globsMatchWithStarAndQuestionMarkOnly(_ pattern: String, _ name: String, _ matches: Bool) {
        #expect(DeviceLedgerFilter.globMatches(pattern, name) == matches)
    }

    @Test func globsBecomeSQLWithEveryOtherCharacterEscaped() {
        #expect(DeviceLedgerFilter.isGlob("store-*") && DeviceLedgerFilter.isGlob("a?") && !DeviceLedgerFilter.isGlob("store_%[1]"))
        #expect(DeviceLedgerFilter.sqliteGlob("st[o]re_%*?") == "st[[]o]re_%*?")
        #expect(DeviceLedgerFilter.postgresLike("st[o]re_%\\*?") == "st[o]re\\_\\%\\\\%_")
    }

    @Test func textIsFoldedForASCIILettersOnly() {
        #expect(DeviceLedgerFilter.asciiLowercased("Till ÄB [X]") == "till Äb [x]")
    }

    @Test func theFilterWithoutItsStateKeepsTheRest() {
        let filter = DeviceLedgerFilter(partition: "p*", state: "stale", deviceID: "d", user: "u", text: "t")
        #expect(filter.withoutState == DeviceLedgerFilter(partition: "p*", deviceID: "d", user: "u", text: "t"))
    }

    @Test func everyFieldNarrows() {
        var entry = DeviceLedgerEntry(
            deviceID: "ABC-1", deviceName: "Till 7", user: "u", release: "0.1.0", partition: "store-3", state: "synced", reportedAt: now)
        let cutoffs = (stale: now.addingTimeInterval(-86_400), wedged: now.addingTimeInterval(-900))
        func matches(_ filter: DeviceLedgerFilter) -> Bool { filter.matches(entry, staleBefore: cutoffs.stale, wedgedBefore: cutoffs.wedged) }
        #expect(matches(DeviceLedgerFilter()))
        #expect(matches(DeviceLedgerFilter(partition: "store-*", state: "synced", reportedBefore: now + 1, deviceID: "ABC-1", user: "u", text: "till")))
        #expect(matches(DeviceLedgerFilter(text: "c-1")) && matches(DeviceLedgerFilter(text: "")))
        #expect(!matches(DeviceLedgerFilter(partition: "store-1")) && !matches(DeviceLedgerFilter(state: "offline")))
        #expect(!matches(DeviceLedgerFilter(reportedBefore: now)) && !matches(DeviceLedgerFilter(deviceID: "abc-1")))
        #expect(!matches(DeviceLedgerFilter(user: "v")) && !matches(DeviceLedgerFilter(text: "8")))
        #expect(!matches(DeviceLedgerFilter(state: "unhealthy")) && !matches(DeviceLedgerFilter(state: "stale")))
        entry.reportedAt = now.addingTimeInterval(-2 * 86_400)
        #expect(matches(DeviceLedgerFilter(state: "unhealthy")) && matches(DeviceLedgerFilter(state: "stale")))
        #expect(!matches(DeviceLedgerFilter(state: "wedged")) && !matches(DeviceLedgerFilter(state: "erroring")))
    }

    @Test func healthClassesGoInTheirOrder() {
        let stale = now.addingTimeInterval(-86_400)
        let wedged = now.addingTimeInterval(-900)
        var entry = DeviceLedgerEntry(
            deviceID: "d", deviceName: "n", user: "u", release: "r", partition: "p", state: "reset-pending",
            unsyncedChanges: 1, unsyncedSince: now.addingTimeInterval(-3600), lastErrorAt: now, reportedAt: now.addingTimeInterval(-2 * 86_400))
        #expect(DeviceLedgerHealth(entry, staleBefore: stale, wedgedBefore: wedged) == .wedged)
        entry.unsyncedChanges = 0
        #expect(DeviceLedgerHealth(entry, staleBefore: stale, wedgedBefore: wedged) == .resetPending)
        entry.state = "synced"
        #expect(DeviceLedgerHealth(entry, staleBefore: stale, wedgedBefore: wedged) == .erroring)
        // An upload after the error clears it; so does an error older than the stale age.
        entry.lastUploadAt = now.addingTimeInterval(1)
        #expect(DeviceLedgerHealth(entry, staleBefore: stale, wedgedBefore: wedged) == .stale)
        entry.lastUploadAt = nil
        entry.lastErrorAt = stale.addingTimeInterval(-1)
        #expect(DeviceLedgerHealth(entry, staleBefore: stale, wedgedBefore: wedged) == .stale)
        entry.reportedAt = now
        #expect(DeviceLedgerHealth(entry, staleBefore: stale, wedgedBefore: wedged) == .healthy)
        #expect(DeviceLedgerFilter.stateNames.contains("unhealthy") && DeviceLedgerFilter.stateNames.contains("other"))
    }
}
