import Foundation
import Logging
import TetherServer
import TetherTestSupport

/// The console's device list at fleet scale (issue 49): a ledger of ``BenchOptions/ledgerEntries``
/// entries in each storage (SQLite in a temporary directory, a PostgreSQL 15 of its own as the
/// conformance tests start), and the server time of one page's query
/// (``DeviceLedgerStorage/devicePageEntries(_:staleBefore:wedgedBefore:)``: what `GET
/// /admin/devices` and the console wait for once the list's counts are kept,
/// ``DeviceLedgerCountCache``) for every sort, first and deep pages (by offset and by cursor),
/// and a few filters; and the counts of each list (``DeviceLedgerStorage/deviceCountRows(_:staleBefore:wedgedBefore:)``:
/// what the first page of a list adds, then once per filter every few seconds). Target:
/// ≤ 200 ms each. Floor, measured in the same run: a trivial indexed lookup (one device's
/// report history, by its primary key).
struct LedgerBench {
    let options: BenchOptions
    static let pageSize = 100
    static let stalePeriod: TimeInterval = 86_400
    static let wedgedPeriod: TimeInterval = 900

    /// One timed page: its name, query, and whether it goes deep (near the end of its list).
    struct Case {
        var name: String
        var query: DeviceLedgerPageQuery
        enum Depth { case first, offset, cursor }
        var depth: Depth
    }

    var cases: [Case] {
        var cases: [Case] = []
        for sort in DeviceLedgerSort.allCases {
            let query = DeviceLedgerPageQuery(sort: sort, limit: Self.pageSize)
            cases += [
                Case(name: "sort \(sort.rawValue), first page", query: query, depth: .first),
                Case(name: "sort \(sort.rawValue), last page by offset", query: query, depth: .offset),
                Case(name: "sort \(sort.rawValue), last page by cursor", query: query, depth: .cursor),
            ]
        }
        var descending = DeviceLedgerPageQuery(sort: .seen, descending: true, limit: Self.pageSize)
        cases.append(Case(name: "sort seen desc, last page by offset", query: descending, depth: .offset))
        descending.sort = .unsynced
        cases.append(Case(name: "sort unsynced desc, first page", query: descending, depth: .first))
        let filters: [(String, DeviceLedgerFilter, DeviceLedgerSort)] = [
            ("partition store-17", DeviceLedgerFilter(partition: "store-17"), .health),
            ("partition store-1*", DeviceLedgerFilter(partition: "store-1*"), .health),
            ("state unhealthy", DeviceLedgerFilter(state: "unhealthy"), .health),
            ("state reset-pending", DeviceLedgerFilter(state: "reset-pending"), .seen),
            ("state stale", DeviceLedgerFilter(state: "stale"), .name),
            ("text till-4242", DeviceLedgerFilter(text: "till-4242"), .name),
            // The bench's users are user-0, -10, -20, -30 and -40 (``fleet(_:now:)``).
            ("user user-10", DeviceLedgerFilter(user: "user-10"), .partition),
        ]
        for (name, filter, sort) in filters {
            let query = DeviceLedgerPageQuery(filter: filter, sort: sort, limit: Self.pageSize)
            cases.append(Case(name: "\(name), sort \(sort.rawValue), first page", query: query, depth: .first))
            cases.append(Case(name: "\(name), sort \(sort.rawValue), last page by offset", query: query, depth: .offset))
        }
        return cases
    }

    func run() async throws -> [BenchFigure] {
        let now = Date()
        let entries = Self.fleet(options.ledgerEntries, now: now)
        var figures: [BenchFigure] = []
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sqlite = try SQLiteServerStorage(directory: directory.path)
        progress("  SQLite: filling \(entries.count) ledger entries…")
        try await Self.fill(sqlite, entries)
        figures += try await measure("SQLite", sqlite, now: now) { query, stale, wedged in
            try await sqlite.explainDevicePage(query, staleBefore: stale, wedgedBefore: wedged)
        }
        try await sqlite.close()

        let cluster = try await PostgresCluster.start()
        do {
            let database = try await cluster.createDatabase()
            let location = PostgresLocation(host: cluster.host, port: cluster.port, user: cluster.user, database: database, tls: .disable)
            var logger = Logger(label: "tether-bench.ledger")
            logger.logLevel = .critical
            let postgres = try PostgresServerStorage(location: location, password: Secret(cluster.password), maximumConnections: 4, logger: logger)
            figures += try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await postgres.run() }
                defer { group.cancelAll() }
                try await postgres.migrate()
                progress("  PostgreSQL: filling \(entries.count) ledger entries…")
                try await Self.fill(postgres, entries)
                // What autovacuum does after a bulk load, done now rather than within a minute.
                try await cluster.sql("ANALYZE", database: database)
                return try await measure("PostgreSQL", postgres, now: now) { query, stale, wedged in
                    try await postgres.explainDevicePage(query, staleBefore: stale, wedgedBefore: wedged)
                }
            }
        } catch {
            await cluster.stop()
            throw error
        }
        await cluster.stop()
        return figures
    }

    /// Every case on one storage, each the median of ``runs``, against the floor.
    func measure(
        _ storageName: String, _ storage: any DeviceLedgerStorage, now: Date,
        explain: (DeviceLedgerPageQuery, Date, Date) async throws -> String
    ) async throws -> [BenchFigure] {
        let stale = now - Self.stalePeriod
        let wedged = now - Self.wedgedPeriod
        let runs = options.quick ? 3 : 7
        let floor = try await Self.median(runs) { _ = try await storage.deviceHistory(deviceID: "till-4242", since: now - 86_400 * 7) }
        var figures: [BenchFigure] = []
        for benchCase in cases {
            var query = benchCase.query
            // A deep page: the last of its list, asked by offset or by the cursor of the entry before it.
            if benchCase.depth != .first {
                let total = try await storage.deviceCountRows(query.filter.withoutState, staleBefore: stale, wedgedBefore: wedged)
                    .total(state: query.filter.state)
                query.offset = max(0, total - Self.pageSize)
                if benchCase.depth == .cursor {
                    var before = query
                    before.offset = max(0, query.offset - 1)
                    before.limit = 1
                    let page = try await storage.devicePage(before, staleBefore: stale, wedgedBefore: wedged)
                    guard let last = page.entries.last else { continue }
                    query.cursor = DeviceLedgerCursor(
                        after: last, sort: query.sort, descending: query.descending,
                        health: DeviceLedgerHealth(last, staleBefore: stale, wedgedBefore: wedged))
                    query.offset = 0
                }
            }
            var returned = 0
            var samples: [Double] = []
            for _ in 0..<runs {
                let clock = ContinuousClock()
                let started = clock.now
                let entries = try await storage.devicePageEntries(query, staleBefore: stale, wedgedBefore: wedged)
                samples.append(started.duration(to: clock.now).seconds)
                returned = min(entries.count, query.limit)
            }
            let seconds = Statistics.median(samples) ?? 0
            let met = seconds <= 0.2
            var notes = ["\(returned) entries on the page"]
            if !met { notes.append("plan: " + (try await explain(query, stale, wedged)).replacingOccurrences(of: "\n", with: " | ")) }
            figures.append(BenchFigure(
                name: "ledger page \(storageName): \(benchCase.name)",
                workload: "\(options.ledgerEntries) ledger entries, \(Self.pageSize) per page, \(runs) runs",
                value: seconds * 1000, unit: "ms", runs: samples.map { $0 * 1000 }, seconds: seconds, floorSeconds: floor,
                target: "≤ 200 ms", met: met, notes: notes))
        }
        figures += try await measureCounts(storageName, storage, stale: stale, wedged: wedged, runs: runs, floor: floor)
        return figures
    }

    /// The counts of each list the cases page through (their filters without a state).
    func measureCounts(
        _ storageName: String, _ storage: any DeviceLedgerStorage, stale: Date, wedged: Date, runs: Int, floor: Double
    ) async throws -> [BenchFigure] {
        var figures: [BenchFigure] = []
        var seen: Set<DeviceLedgerFilter> = []
        for benchCase in cases where seen.insert(benchCase.query.filter.withoutState).inserted {
            let filter = benchCase.query.filter.withoutState
            var counted = 0
            var samples: [Double] = []
            for _ in 0..<runs {
                let clock = ContinuousClock()
                let started = clock.now
                counted = try await storage.deviceCountRows(filter, staleBefore: stale, wedgedBefore: wedged).entries
                samples.append(started.duration(to: clock.now).seconds)
            }
            let seconds = Statistics.median(samples) ?? 0
            let name = benchCase.name.components(separatedBy: ", sort").first.map { $0.hasPrefix("sort") || $0.hasPrefix("state") ? "whole ledger" : $0 }
            figures.append(BenchFigure(
                name: "ledger counts \(storageName): \(name ?? "whole ledger")",
                workload: "\(options.ledgerEntries) ledger entries, \(runs) runs", value: seconds * 1000, unit: "ms",
                runs: samples.map { $0 * 1000 }, seconds: seconds, floorSeconds: floor, target: "≤ 200 ms", met: seconds <= 0.2,
                notes: ["\(counted) entries counted"]))
        }
        return figures
    }

    static func median(_ runs: Int, _ body: () async throws -> Void) async throws -> Double {
        var samples: [Double] = []
        for _ in 0..<runs {
            let clock = ContinuousClock()
            let started = clock.now
            try await body()
            samples.append(started.duration(to: clock.now).seconds)
        }
        return Statistics.median(samples) ?? 0
    }

    static func fill(_ storage: any DeviceLedgerStorage, _ entries: [DeviceLedgerEntry]) async throws {
        var start = 0
        while start < entries.count {
            let end = min(entries.count, start + 2_000)
            try await storage.recordDeviceReports(Array(entries[start..<end]))
            start = end
        }
    }

    /// `count` entries: devices `till-N` of two partitions each (`store-(N mod 300)` and
    /// `catalog-(N mod 3)`), one in ten under one of 50 `user-K`s, the rest under `fleet`;
    /// 30 % stale, 2 % wedged, 3 % erroring, 1 % waiting for a reset, names with many ties.
    static func fleet(_ count: Int, now: Date) -> [DeviceLedgerEntry] {
        var entries: [DeviceLedgerEntry] = []
        entries.reserveCapacity(count)
        let states = ["synced", "synced", "synced", "synced", "synced", "synced", "synced", "syncing", "offline", "paused"]
        for i in 0..<count {
            let device = i / 2
            let hash = (device &* 2_654_435_761) % 1_000
            let partition = i % 2 == 0 ? "store-\(device % 300)" : "catalog-\(device % 3)"
            let stale = hash < 300
            var entry = DeviceLedgerEntry(
                deviceID: "till-\(device)", deviceName: "till-\(device % 20_000)", user: device % 10 == 0 ? "user-\(device % 50)" : "fleet",
                release: "0.1.0", partition: partition, state: hash % 100 == 7 ? "reset-pending" : states[hash % states.count],
                unsyncedChanges: Int64(hash % 5),
                reportedAt: now - (stale ? 86_400 * (2 + Double(hash % 8)) : Double(hash * 3)))
            if hash % 50 == 11 {
                entry.unsyncedChanges = 40
                entry.unsyncedSince = now - 7_200
            }
            if hash % 33 == 5 { entry.lastErrorAt = now - 120 }
            entry.lastUploadAt = hash % 50 == 11 ? nil : now - Double(hash * 5)
            entries.append(entry)
        }
        return entries
    }
}
