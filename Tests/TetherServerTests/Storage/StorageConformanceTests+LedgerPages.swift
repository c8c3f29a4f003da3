import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// The ledger's pages (issue 49), the same on both storages: every filter and every order
/// against a model in Swift, pages by offset and by cursor that neither repeat nor skip an
/// entry while ties exist, globs over hostile partition names, the counts above a list, and
/// the selections of remote actions.
extension StorageConformanceTests {
    var staleBefore: Date { now.addingTimeInterval(-86_400) }
    var wedgedBefore: Date { now.addingTimeInterval(-900) }

    /// Partitions whose names are what a glob must not take for wildcards.
    static let hostilePartitions = ["store-1", "store-2", "store_1", "store%1", "store[1]", "store-*x", "Store-1", "st\\ore", "caf\u{e9}-1"]

    /// A fleet with every health class, ties on time and name, and hostile names.
    func ledgerFleet() -> [DeviceLedgerEntry] {
        var fleet: [DeviceLedgerEntry] = []
        for i in 0..<48 {
            let partition = Self.hostilePartitions[i % Self.hostilePartitions.count]
            // Reports at 6 distinct times and 5 distinct names: many ties.
            let at = now.addingTimeInterval(-Double((i % 6) * 40_000))
            var entry = Self.entry(
                "dev-\(i % 17)", partition, state: DeviceLedgerEntry.states[i % DeviceLedgerEntry.states.count],
                user: i % 3 == 0 ? "bob" : "alice", at: at)
            entry.deviceName = ["till %1", "till_1", "Till [A]", "caf\u{e9} 'x'", "till\\*"][i % 5]
            entry.unsyncedChanges = Int64(i % 4)
            if i % 7 == 0 {
                entry.unsyncedChanges = 5
                entry.unsyncedSince = now.addingTimeInterval(-3600)
            }
            if i % 5 == 1 { entry.lastErrorAt = now.addingTimeInterval(-Double(i * 1000)) }
            if i % 4 == 0 { entry.lastUploadAt = now.addingTimeInterval(-Double(i * 500)) }
            fleet.append(entry)
        }
        return fleet
    }

    /// The model of an order: the sort's keys in Swift, strings in byte order.
    func modelOrder(_ entries: [DeviceLedgerEntry], _ sort: DeviceLedgerSort, descending: Bool) -> [DeviceLedgerEntry] {
        func compare(_ a: DeviceLedgerEntry, _ b: DeviceLedgerEntry, _ key: DeviceLedgerSortKey) -> Int {
            func bytes(_ x: String, _ y: String) -> Int {
                x == y ? 0 : (Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8)) ? -1 : 1)
            }
            func numbers<T: Comparable>(_ x: T, _ y: T) -> Int { x == y ? 0 : (x < y ? -1 : 1) }
            switch key {
            case .health:
                return numbers(
                    DeviceLedgerHealth(a, staleBefore: staleBefore, wedgedBefore: wedgedBefore).rawValue,
                    DeviceLedgerHealth(b, staleBefore: staleBefore, wedgedBefore: wedgedBefore).rawValue)
            case .reportedAt: return numbers(a.reportedAt, b.reportedAt)
            case .deviceName: return bytes(a.deviceName, b.deviceName)
            case .user: return bytes(a.user, b.user)
            case .deviceID: return bytes(a.deviceID, b.deviceID)
            case .partition: return bytes(a.partition, b.partition)
            case .state: return bytes(a.state, b.state)
            case .unsynced: return numbers(a.unsyncedChanges, b.unsyncedChanges)
            }
        }
        return entries.sorted { a, b in
            for key in sort.keys {
                let c = compare(a, b, key)
                if c != 0 { return descending ? c > 0 : c < 0 }
            }
            return false
        }
    }

    /// Every page of `query` by offset, then by cursor.
    func allPages(_ storage: any ServerStorage, _ query: DeviceLedgerPageQuery) async throws -> (byOffset: [DeviceLedgerEntry], byCursor: [DeviceLedgerEntry]) {
        var byOffset: [DeviceLedgerEntry] = []
        var q = query
        while true {
            let page = try await storage.devicePage(q, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
            byOffset += page.entries
            guard let next = page.nextOffset else { break }
            #expect(next == q.offset + q.limit)
            q.offset = next
        }
        var byCursor: [DeviceLedgerEntry] = []
        q = query
        while true {
            let page = try await storage.devicePage(q, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
            byCursor += page.entries
            guard let next = page.nextCursor else { break }
            // The cursor goes through its text, as the API carries it.
            q.cursor = try DeviceLedgerCursor.parse(next.text, sort: q.sort, descending: q.descending)
            #expect(page.nextOffset == nil || q.offset == 0)
        }
        return (byOffset, byCursor)
    }

    static let pageFilters: [DeviceLedgerFilter] = [
        DeviceLedgerFilter(),
        DeviceLedgerFilter(partition: "store-1"),
        DeviceLedgerFilter(partition: "store-*"),
        DeviceLedgerFilter(state: "synced"),
        DeviceLedgerFilter(state: "unhealthy"),
        DeviceLedgerFilter(state: "wedged"),
        DeviceLedgerFilter(state: "erroring"),
        DeviceLedgerFilter(state: "stale"),
        DeviceLedgerFilter(state: "reset-pending", user: "alice"),
        DeviceLedgerFilter(deviceID: "dev-3"),
        DeviceLedgerFilter(user: "bob"),
        DeviceLedgerFilter(text: "TILL"),
        DeviceLedgerFilter(text: "V-1"),
        DeviceLedgerFilter(partition: "*1*", state: "unhealthy", text: "%1"),
    ]

    @Test(arguments: StorageBackend.allCases)
    func everySortAndFilterPagesTheWholeLedgerInTheModelsOrder(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let fleet = ledgerFleet()
            try await storage.recordDeviceReports(fleet)
            for filter in Self.pageFilters {
                let matching = fleet.filter { filter.matches($0, staleBefore: staleBefore, wedgedBefore: wedgedBefore) }
                #expect(!matching.isEmpty, "the fleet has entries for \(filter)")
                for sort in DeviceLedgerSort.allCases {
                    for descending in [false, true] {
                        let query = DeviceLedgerPageQuery(filter: filter, sort: sort, descending: descending, limit: 7)
                        let expected = modelOrder(matching, sort, descending: descending)
                        let (byOffset, byCursor) = try await allPages(storage, query)
                        #expect(byOffset == expected, "\(filter) by \(sort)\(descending ? " desc" : "") (offset)")
                        #expect(byCursor == expected, "\(filter) by \(sort)\(descending ? " desc" : "") (cursor)")
                    }
                }
                let first = try await storage.devicePage(
                    DeviceLedgerPageQuery(filter: filter, limit: 500), staleBefore: staleBefore, wedgedBefore: wedgedBefore)
                #expect(first.total == matching.count && first.nextOffset == nil && first.nextCursor == nil)
                #expect(try await storage.countDevices(matching: filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
                    == Set(matching.map { [$0.user, $0.deviceID] }).count)
                let keys = try await storage.deviceKeys(matching: filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore, limit: 1000)
                #expect(Set(keys) == Set(matching.map { DeviceLedgerKey(user: $0.user, deviceID: $0.deviceID, partition: $0.partition, deviceName: $0.deviceName) }))
                #expect(try await storage.deviceKeys(matching: filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore, limit: 1).count == 1)
            }
        }
    }

    /// The counts above a list are over the filter without its state: chips for every state.
    @Test(arguments: StorageBackend.allCases)
    func aPagesCountsAreOverItsFilterWithoutItsState(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let fleet = ledgerFleet()
            try await storage.recordDeviceReports(fleet)
            for state in [nil] + DeviceLedgerFilter.stateNames {
                let filter = DeviceLedgerFilter(partition: "store*", state: state)
                let page = try await storage.devicePage(
                    DeviceLedgerPageQuery(filter: filter, limit: 3), staleBefore: staleBefore, wedgedBefore: wedgedBefore)
                let around = fleet.filter { filter.withoutState.matches($0, staleBefore: staleBefore, wedgedBefore: wedgedBefore) }
                #expect(page.countsByState == Dictionary(grouping: around, by: \.state).mapValues(\.count))
                #expect(page.countsByHealth == Dictionary(grouping: around) {
                    DeviceLedgerHealth($0, staleBefore: staleBefore, wedgedBefore: wedgedBefore).name
                }.mapValues(\.count))
                #expect(page.stale == around.filter { $0.reportedAt < staleBefore }.count)
                #expect(page.wedged == around.filter { $0.isWedged(before: wedgedBefore) }.count)
                #expect(page.erroring == around.filter { DeviceLedgerHealth.isErroring($0, staleBefore: staleBefore) }.count)
                #expect(page.total == fleet.filter { filter.matches($0, staleBefore: staleBefore, wedgedBefore: wedgedBefore) }.count)
            }
        }
    }

    /// The health order exactly: wedged, reset-pending, erroring (an error newer than the last
    /// upload, within the stale age), stale, the rest; ties the least recently reported first,
    /// then the name.
    @Test(arguments: StorageBackend.allCases)
    func theHealthOrderPutsTheUnhealthyFirst(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            func make(_ id: String, _ name: String, state: String = "synced", ago: Double, _ change: (inout DeviceLedgerEntry) -> Void = { _ in }) -> DeviceLedgerEntry {
                var entry = Self.entry(id, "p", state: state, at: now.addingTimeInterval(-ago))
                entry.deviceName = name
                change(&entry)
                return entry
            }
            let fleet = [
                make("fine-b", "b", ago: 10),
                make("fine-a", "a", ago: 10),
                make("fine-old", "z", ago: 100),
                make("stale", "s", ago: 2 * 86_400),
                make("old-error", "e", ago: 10) { $0.lastErrorAt = now.addingTimeInterval(-3 * 86_400) },
                make("fixed-error", "f", ago: 10) { $0.lastErrorAt = now.addingTimeInterval(-600); $0.lastUploadAt = now.addingTimeInterval(-60) },
                make("erroring", "r", ago: 10) { $0.lastErrorAt = now.addingTimeInterval(-60); $0.lastUploadAt = now.addingTimeInterval(-600) },
                make("erroring-stale", "q", ago: 2 * 86_400) { $0.lastErrorAt = now.addingTimeInterval(-3600) },
                make("pending", "p", state: "reset-pending", ago: 5),
                make("pending-old", "p", state: "reset-pending", ago: 3 * 86_400),
                make("wedged", "w", state: "syncing", ago: 10) { $0.unsyncedChanges = 2; $0.unsyncedSince = now.addingTimeInterval(-3600) },
                make("moving", "m", state: "syncing", ago: 10) {
                    $0.unsyncedChanges = 2; $0.unsyncedSince = now.addingTimeInterval(-3600); $0.lastUploadAt = now.addingTimeInterval(-60)
                },
            ]
            try await storage.recordDeviceReports(fleet)
            let page = try await storage.devicePage(DeviceLedgerPageQuery(), staleBefore: staleBefore, wedgedBefore: wedgedBefore)
            #expect(page.entries.map(\.deviceID) == [
                "wedged", "pending-old", "pending", "erroring-stale", "erroring", "stale",
                "fine-old", "fine-a", "fine-b", "old-error", "fixed-error", "moving",
            ])
            #expect(page.countsByHealth == ["wedged": 1, "reset-pending": 2, "erroring": 2, "stale": 1, "healthy": 6])
        }
    }

    /// A glob's `*` and `?` are its only wildcards: `%`, `_`, `[` and `\` in it are themselves,
    /// on both storages.
    @Test(arguments: StorageBackend.allCases)
    func partitionGlobsTakeOnlyStarAndQuestionMarkAsWildcards(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            try await storage.recordDeviceReports(Self.hostilePartitions.map { Self.entry("d", $0, at: now) })
            let cases: [(String, [String])] = [
                ("store-*", ["store-*x", "store-1", "store-2"]),
                ("store_*", ["store_1"]),
                ("store%*", ["store%1"]),
                ("store[*", ["store[1]"]),
                ("store[1]", ["store[1]"]),
                ("store?1", ["store%1", "store-1", "store_1"]),
                ("*]", ["store[1]"]),
                ("*\\*", ["st\\ore"]),
                ("st\\ore", ["st\\ore"]),
                ("Store-*", ["Store-1"]),
                ("caf?-1", ["caf\u{e9}-1"]),
                ("%", []),
                ("_*", []),
                ("*", Self.hostilePartitions.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }),
            ]
            for (glob, expected) in cases {
                let page = try await storage.devicePage(
                    DeviceLedgerPageQuery(filter: DeviceLedgerFilter(partition: glob), sort: .partition, limit: 100),
                    staleBefore: staleBefore, wedgedBefore: wedgedBefore)
                #expect(page.entries.map(\.partition) == expected, "glob \(glob)")
                #expect(Self.hostilePartitions.filter { DeviceLedgerFilter.globMatches(glob, $0) }.sorted() == expected.sorted(), "model \(glob)")
            }
        }
    }
}
