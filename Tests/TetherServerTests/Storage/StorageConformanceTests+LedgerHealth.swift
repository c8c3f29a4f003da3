import Foundation
import Testing
import TetherTestTraits
@testable import TetherServer

/// The stored health class (``DeviceLedgerHealthColumn``) on both storages: whatever cutoffs a
/// page asks for — later, earlier, the same again — and whatever was written between pages,
/// the health order is the model's.
extension StorageConformanceTests {
    /// The health order of `entries` at these cutoffs, in Swift.
    func modelHealthOrder(_ entries: [DeviceLedgerEntry], staleBefore: Date, wedgedBefore: Date, descending: Bool) -> [DeviceLedgerEntry] {
        func key(_ e: DeviceLedgerEntry) -> (Int, Double, [UInt8], [UInt8], [UInt8], [UInt8]) {
            (DeviceLedgerHealth(e, staleBefore: staleBefore, wedgedBefore: wedgedBefore).rawValue, e.reportedAt.timeIntervalSince1970,
             Array(e.deviceName.utf8), Array(e.user.utf8), Array(e.deviceID.utf8), Array(e.partition.utf8))
        }
        func less(_ a: DeviceLedgerEntry, _ b: DeviceLedgerEntry) -> Bool {
            let (x, y) = (key(a), key(b))
            if x.0 != y.0 { return x.0 < y.0 }
            if x.1 != y.1 { return x.1 < y.1 }
            for (p, q) in [(x.2, y.2), (x.3, y.3), (x.4, y.4), (x.5, y.5)] where p != q { return p.lexicographicallyPrecedes(q) }
            return false
        }
        return entries.sorted { descending ? less($1, $0) : less($0, $1) }
    }

    @Test(arguments: StorageBackend.allCases)
    func theStoredHealthClassFollowsTheCutoffsBothWays(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            var fleet = ledgerFleet()
            try await storage.recordDeviceReports(fleet)
            // Cutoffs moved by these seconds from the suite's: across reports, errors and unsynced waits.
            let steps: [TimeInterval] = [0, 30_000, 200_000, -100_000, 2_800, 2_800, -2_800, 0]
            for (i, step) in steps.enumerated() {
                let stale = staleBefore.addingTimeInterval(step)
                let wedged = wedgedBefore.addingTimeInterval(step)
                for filter in [DeviceLedgerFilter(), DeviceLedgerFilter(state: "unhealthy"), DeviceLedgerFilter(partition: "store-*")] {
                    let matching = fleet.filter { filter.matches($0, staleBefore: stale, wedgedBefore: wedged) }
                    for descending in [false, true] {
                        let expected = modelHealthOrder(matching, staleBefore: stale, wedgedBefore: wedged, descending: descending)
                        var query = DeviceLedgerPageQuery(filter: filter, sort: .health, descending: descending, limit: 5)
                        var byOffset: [DeviceLedgerEntry] = []
                        var byCursor: [DeviceLedgerEntry] = []
                        while true {
                            let page = try await storage.devicePage(query, staleBefore: stale, wedgedBefore: wedged)
                            byOffset += page.entries
                            guard let next = page.nextOffset else { break }
                            query.offset = next
                        }
                        query.offset = 0
                        while true {
                            let page = try await storage.devicePage(query, staleBefore: stale, wedgedBefore: wedged)
                            byCursor += page.entries
                            guard let next = page.nextCursor else { break }
                            query.cursor = next
                        }
                        #expect(byOffset == expected, "step \(i) (\(step) s), \(filter)\(descending ? " desc" : "") by offset")
                        #expect(byCursor == expected, "step \(i) (\(step) s), \(filter)\(descending ? " desc" : "") by cursor")
                    }
                }
                // Reports between pages, classed by the cutoffs stored then: a new error, a wait
                // that starts, one that ends, a reset that waits.
                var changed = fleet[i * 5 % fleet.count]
                switch i % 4 {
                case 0: changed.lastErrorAt = now.addingTimeInterval(-100)
                case 1: changed.unsyncedChanges = 3; changed.unsyncedSince = now.addingTimeInterval(-20_000)
                case 2: changed.unsyncedChanges = 0; changed.unsyncedSince = nil
                default: changed.state = "reset-pending"
                }
                changed.reportedAt = now.addingTimeInterval(-Double(i) * 10_000)
                fleet[i * 5 % fleet.count] = changed
                try await storage.recordDeviceReports([changed])
            }
        }
    }
}
