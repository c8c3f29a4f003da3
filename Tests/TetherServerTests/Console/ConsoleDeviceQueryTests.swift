import Foundation
import Hummingbird
import Testing
@testable import TetherServer

/// A device list's query: read from a query string with `URLEncodedFormDecoder`, written back
/// into links without its defaults.
@Suite struct ConsoleDeviceQueryTests {
    static func decode(_ query: String) throws -> ConsoleDeviceQuery {
        try URLEncodedFormDecoder().decode(ConsoleDeviceQuery.self, from: query)
    }

    @Test func emptyFieldsAreNoFilterAndTheDefaultIsUnhealthyFirst() throws {
        let query = try Self.decode("partition=&state=&stale=&text=&sort=")
        #expect(query == ConsoleDeviceQuery())
        #expect(query.sort == .health && !query.descending && query.offset == 0 && query.refresh == nil)
        #expect(query.queryString == "")
    }

    @Test func aQueryReadsAndWritesBack() throws {
        let query = try Self.decode("partition=store-*&state=reset-pending&stale=24h&text=till%207&sort=seen&desc=1&offset=200&refresh=30")
        #expect(query.partition == "store-*" && query.state == "reset-pending" && query.stale == "24h" && query.text == "till 7")
        #expect(query.sort == .seen && query.descending && query.offset == 200 && query.refresh == 30)
        #expect(try Self.decode(String(query.queryString.dropFirst())) == query)
        #expect(query.queryString.contains("partition=store-*") && query.queryString.contains("text=till%207"))
        let now = Date(timeIntervalSince1970: 1_000_000)
        let filter = query.filter(now: now)
        #expect(filter.partition == "store-*" && filter.reportedBefore == now - 86_400 && filter.text == "till 7")
        #expect(query.page(now: now).offset == 200 && query.page(now: now).limit == ConsoleDeviceQuery.pageSize)
    }

    @Test func whatDoesNotReadIsTheDefaultOrAProblem() throws {
        let query = try Self.decode("sort=sideways&offset=-5&refresh=1")
        #expect(query.sort == .health && query.offset == 0 && query.refresh == ConsoleDeviceQuery.refreshBounds.lowerBound)
        #expect(try Self.decode("stale=soon").problem?.contains("duration") == true)
        #expect(try Self.decode("state=happy").problem?.contains("reset-pending") == true)
        #expect(try Self.decode("state=unhealthy").problem == nil)
    }

    @Test func aLinkChangesOneThingAndKeepsTheRest() throws {
        let query = try Self.decode("partition=p&sort=name")
        #expect(query.with { $0.offset = 100 }.queryString == "?partition=p&sort=name&offset=100")
        #expect(query.with { $0.refresh = 10 }.queryString == "?partition=p&sort=name&refresh=10")
    }
}
