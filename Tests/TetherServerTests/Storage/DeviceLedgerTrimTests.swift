import Testing
@testable import TetherServer

/// How housekeeping brings a ledger over its bound back to it (``DeviceLedgerTrim``).
@Suite struct DeviceLedgerTrimTests {
    @Test func aLedgerWithinItsBoundIsLeftAlone() {
        #expect(DeviceLedgerTrim.cap(entriesPerUser: [], maxEntries: 1) == nil)
        #expect(DeviceLedgerTrim.cap(entriesPerUser: [3, 2], maxEntries: 5) == nil)
    }

    @Test func theLargestHoldersAreCutFirst() {
        #expect(DeviceLedgerTrim.cap(entriesPerUser: [6, 2], maxEntries: 6) == 4)
        #expect(DeviceLedgerTrim.cap(entriesPerUser: [100, 1, 1, 1], maxEntries: 10) == 7)
        #expect(DeviceLedgerTrim.cap(entriesPerUser: [5, 5, 5], maxEntries: 9) == 3)
        #expect(DeviceLedgerTrim.cap(entriesPerUser: [9], maxEntries: 1) == 1)
    }

    /// Over many ledgers: what is kept fits, the cap is the largest that does, and no user at or
    /// under its fair share (the bound divided by the users) loses an entry.
    @Test func theCapFitsIsLargestAndSparesTheFairShare() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let counts = (0..<Int.random(in: 1...8, using: &generator)).map { _ in Int.random(in: 0...50, using: &generator) }
            let maxEntries = Int.random(in: 1...200, using: &generator)
            let total = counts.reduce(0, +)
            guard let cap = DeviceLedgerTrim.cap(entriesPerUser: counts, maxEntries: maxEntries) else {
                #expect(total <= maxEntries)
                continue
            }
            func kept(_ cap: Int) -> Int { counts.reduce(0) { $0 + min($1, cap) } }
            #expect(total > maxEntries)
            #expect(kept(cap) <= maxEntries && kept(cap + 1) > maxEntries, "\(counts) \(maxEntries) \(cap)")
            #expect(cap >= maxEntries / counts.count, "\(counts) \(maxEntries) \(cap)")
        }
    }
}
