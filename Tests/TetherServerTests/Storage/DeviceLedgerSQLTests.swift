import Foundation
import Testing
@testable import TetherServer

/// The shared SQL of the ledger's pages: as many placeholders as values, typed on PostgreSQL,
/// cursors compared over the sort's keys in its direction.
@Suite struct DeviceLedgerSQLTests {
    let stale = Date(timeIntervalSince1970: 1_000)
    let wedged = Date(timeIntervalSince1970: 2_000)

    static let everyFilter = DeviceLedgerFilter(
        partition: "s-*", state: "unhealthy", reportedBefore: Date(timeIntervalSince1970: 5), deviceID: "d", user: "u", text: "Till")

    @Test(arguments: DeviceLedgerSort.allCases)
    func placeholdersMatchTheirValues(_ sort: DeviceLedgerSort) throws {
        let entry = DeviceLedgerEntry(deviceID: "d", deviceName: "n", user: "u", release: "r", partition: "p", state: "synced", reportedAt: stale)
        let cursor = DeviceLedgerCursor(after: entry, sort: sort, descending: true, health: .stale)
        let query = DeviceLedgerPageQuery(filter: Self.everyFilter, sort: sort, descending: true, limit: 10, cursor: cursor)
        let sqlite = DeviceLedgerSQL.page(query, staleBefore: stale, wedgedBefore: wedged, dialect: .sqlite)
        #expect(sqlite.text.filter { $0 == "?" }.count == sqlite.binds.count)
        #expect(sqlite.text.contains("partition GLOB ?") && sqlite.text.contains(") < (") && sqlite.text.contains(" DESC"))
        let postgres = DeviceLedgerSQL.page(query, staleBefore: stale, wedgedBefore: wedged, dialect: .postgres)
        // The same values but the glob and the text, which PostgreSQL matches with LIKE.
        let unpatterned = postgres.binds.dropFirst().map { $0 == .text("%till%") ? DeviceLedgerSQL.Bind.text("till") : $0 }
        #expect(unpatterned == Array(sqlite.binds.dropFirst()) && sqlite.binds.first == .text("s-*"))
        #expect(postgres.binds.filter { $0 == .text("%till%") }.count == 2)
        #expect(postgres.text.contains("$\(postgres.binds.count)::bigint") && !postgres.text.contains("$\(postgres.binds.count + 1)"))
        #expect(postgres.text.contains("LIKE $1::text ESCAPE '\\'"))
        #expect(postgres.binds.first == .text("s-%"))
        // The last value is the limit, one over the page (the next page's sign).
        #expect(sqlite.binds.last == .integer(11))
    }

    @Test func offsetsAreUsedOnlyWithoutACursor() {
        let query = DeviceLedgerPageQuery(sort: .name, limit: 5, offset: 20)
        let sql = DeviceLedgerSQL.page(query, staleBefore: stale, wedgedBefore: wedged, dialect: .sqlite)
        #expect(sql.text.contains("LIMIT ? OFFSET ?") && sql.binds == [.integer(6), .integer(20)])
        #expect(sql.text.contains("ORDER BY device_name ASC, user_name ASC, device_id ASC, partition ASC LIMIT"))
        #expect(sql.text.contains("WHERE 1 = 1"))
        // The offset skips keys in the subquery; the page's entries are read whole, in order.
        #expect(sql.text.contains("SELECT user_name, device_id, partition FROM device_reports WHERE"))
        #expect(sql.text.hasSuffix("ORDER BY r.device_name ASC, r.user_name ASC, r.device_id ASC, r.partition ASC"))
        let first = DeviceLedgerSQL.page(DeviceLedgerPageQuery(sort: .name, limit: 5), staleBefore: stale, wedgedBefore: wedged, dialect: .sqlite)
        #expect(!first.text.contains("OFFSET") && !first.text.contains("JOIN") && first.binds == [.integer(6)])
    }

    @Test func countsKeysAndDeviceCountsTakeTheFilter() {
        for dialect in [DeviceLedgerSQL.Dialect.sqlite, .postgres] {
            for sql in [
                DeviceLedgerSQL.counts(Self.everyFilter, staleBefore: stale, wedgedBefore: wedged, dialect: dialect),
                DeviceLedgerSQL.keys(Self.everyFilter, staleBefore: stale, wedgedBefore: wedged, limit: 3, dialect: dialect),
                DeviceLedgerSQL.deviceCount(Self.everyFilter, staleBefore: stale, wedgedBefore: wedged, dialect: dialect),
            ] {
                let text = dialect == .sqlite ? "till" : "%till%"
                #expect(sql.binds.contains(.text("u")) && sql.binds.contains(.text(text)) && sql.binds.contains(.text("d")))
                if dialect == .sqlite { #expect(sql.text.filter { $0 == "?" }.count == sql.binds.count) }
            }
        }
    }

    /// PostgreSQL's text filter is a substring: LIKE's wildcards and escape in it match themselves.
    @Test func theTextFilterIsALikePatternOfItselfOnPostgres() {
        #expect(DeviceLedgerSQL.likeEscaped("50%_a\\b") == "50\\%\\_a\\\\b")
        let sql = DeviceLedgerSQL.page(
            DeviceLedgerPageQuery(filter: DeviceLedgerFilter(text: "Till_%")), staleBefore: stale, wedgedBefore: wedged, dialect: .postgres)
        #expect(sql.binds.filter { $0 == .text("%till\\_\\%%") }.count == 2)
        #expect(sql.text.contains("LIKE $1::text ESCAPE '\\' OR"))
    }
}
