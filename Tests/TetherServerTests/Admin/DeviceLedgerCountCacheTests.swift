import Foundation
import Testing
@testable import TetherServer

/// The counts above large ledger lists, kept per filter for a few seconds of the server's clock,
/// bounded, and never kept for small lists (counted exactly every time).
@Suite struct DeviceLedgerCountCacheTests {
    let start = Date(timeIntervalSince1970: 1_000_000)

    func counts(_ entries: Int) -> DeviceLedgerCountRows {
        var rows = DeviceLedgerCountRows()
        rows.add(state: "synced", health: DeviceLedgerHealth.healthy.rawValue, entries: entries, stale: 0, erroring: 0)
        return rows
    }

    @Test func keptCountsServeTheirFilterUntilTheyAreMaxAgeOld() {
        var cache = DeviceLedgerCountCache(maxAge: 5, capacity: 4, minimumEntries: 10)
        let filter = DeviceLedgerFilter(partition: "store-*")
        #expect(cache.counts(of: filter, at: start) == nil)
        cache.keep(counts(100), of: filter, at: start)
        #expect(cache.counts(of: filter, at: start) == counts(100))
        #expect(cache.counts(of: filter, at: start + 4.9) == counts(100))
        #expect(cache.counts(of: filter, at: start + 5) == nil)
        // Another filter (even one differing only in its text) is counted on its own.
        #expect(cache.counts(of: DeviceLedgerFilter(partition: "store-*", text: "a"), at: start) == nil)
        #expect(cache.counts(of: DeviceLedgerFilter(), at: start) == nil)
    }

    @Test func aClockSetBackDoesNotKeepCountsLonger() {
        var cache = DeviceLedgerCountCache(maxAge: 5, capacity: 4, minimumEntries: 10)
        cache.keep(counts(100), of: DeviceLedgerFilter(), at: start)
        #expect(cache.counts(of: DeviceLedgerFilter(), at: start - 1) == nil)
    }

    @Test func smallListsAreNeverKept() {
        var cache = DeviceLedgerCountCache(maxAge: 5, capacity: 4, minimumEntries: 10)
        cache.keep(counts(9), of: DeviceLedgerFilter(), at: start)
        #expect(cache.counts(of: DeviceLedgerFilter(), at: start) == nil && cache.count == 0)
        cache.keep(counts(10), of: DeviceLedgerFilter(), at: start)
        #expect(cache.counts(of: DeviceLedgerFilter(), at: start) == counts(10))
        // A list that shrank below the minimum is counted exactly again.
        cache.keep(counts(3), of: DeviceLedgerFilter(), at: start + 1)
        #expect(cache.counts(of: DeviceLedgerFilter(), at: start + 1) == nil && cache.count == 0)
    }

    @Test func atMostCapacityFiltersAreKeptTheOldestCountedGoingFirst() {
        var cache = DeviceLedgerCountCache(maxAge: 60, capacity: 3, minimumEntries: 1)
        for i in 0..<5 {
            cache.keep(counts(10 + i), of: DeviceLedgerFilter(user: "user-\(i)"), at: start + Double(i))
        }
        #expect(cache.count == 3)
        #expect(cache.counts(of: DeviceLedgerFilter(user: "user-0"), at: start + 5) == nil)
        #expect(cache.counts(of: DeviceLedgerFilter(user: "user-1"), at: start + 5) == nil)
        #expect(cache.counts(of: DeviceLedgerFilter(user: "user-4"), at: start + 5) == counts(14))
    }

    @Test func keepingDropsWhatIsNoLongerFresh() {
        var cache = DeviceLedgerCountCache(maxAge: 5, capacity: 10, minimumEntries: 1)
        cache.keep(counts(1), of: DeviceLedgerFilter(user: "a"), at: start)
        cache.keep(counts(2), of: DeviceLedgerFilter(user: "b"), at: start + 10)
        #expect(cache.count == 1)
    }

    @Test func theDefaultsAreAFewSecondsAndLargeLists() {
        let cache = DeviceLedgerCountCache()
        #expect(cache.maxAge == 5 && cache.capacity == 64 && cache.minimumEntries == 20_000)
    }
}
