import Testing
@testable import TetherServer

/// One connection's log of refused ledger entries: the first at once, the rest folded into a
/// line at close (``ReportRefusalLog``).
@Suite struct ReportRefusalLogTests {
    @Test func theFirstRefusalIsLoggedTheRestFoldedUntilTheConnectionCloses() {
        var log = ReportRefusalLog()
        #expect(log.refused([:], user: "u") == nil)
        #expect(log.closing(user: "u") == nil)
        let first = log.refused([.quota: 0, .notGranted: 1024, .full: 2], user: "u")
        #expect(first?.contains("user u: 1024 not_granted, 2 full") == true, "\(first ?? "-")")
        for _ in 0..<100 { #expect(log.refused([.unknownPartition: 10, .notGranted: 1], user: "u") == nil) }
        #expect(log.closing(user: "u")?.contains("user u: 100 not_granted, 1000 unknown_partition") == true)
    }
}
