import Testing
@testable import TetherServer

/// ``AdmissionLedger``: connections and bytes per peer group, each group's share, and whom a
/// full total evicts (max-min fairness), without locks or sockets.
@Suite struct AdmissionLedgerTests {
    static func ledger(perConnection: Int = 1000, perPeer: Int? = 3000, total: Int = 10_000, connections: Int = 100) -> AdmissionLedger {
        var limits = ConnectionLimits()
        limits.unauthenticatedBytes = perConnection
        limits.unauthenticatedBytesPerPeerSetting = perPeer
        limits.unauthenticatedBytesTotal = total
        limits.connectionsPerPeer = connections
        return AdmissionLedger(limits: limits)
    }

    static func group(_ text: String) -> PeerGroup { PeerGroup(IPAddress(text)!, ipv6PrefixLength: 64) }

    /// Admits `count` connections of `host` and fills each with `bytes`.
    static func fill(_ ledger: inout AdmissionLedger, _ host: String, count: Int, bytes: Int) -> [ConnectionID] {
        (0..<count).map { _ in
            let id = ledger.admit(group(host))!
            #expect(ledger.hold(bytes, by: id) == .held(evicting: []))
            return id
        }
    }

    @Test func connectionsAreCountedPerGroupAndReleasedOnLeave() {
        var ledger = Self.ledger(connections: 2)
        let a = ledger.admit(Self.group("192.0.2.1"))
        let b = ledger.admit(Self.group("192.0.2.1"))
        #expect(a != nil && b != nil && a != b)
        #expect(ledger.admit(Self.group("192.0.2.1")) == nil)
        #expect(ledger.admit(Self.group("192.0.2.2")) != nil)
        ledger.leave(a!)
        ledger.leave(a!)  // idempotent
        #expect(ledger.connectionCount(of: Self.group("192.0.2.1")) == 1)
        #expect(ledger.admit(Self.group("192.0.2.1")) != nil)
    }

    @Test func ipv6PeersOfOnePrefixAreOneGroupAndMappedIPv4IsIPv4() {
        var ledger = Self.ledger(connections: 1)
        #expect(ledger.admit(PeerGroup(IPAddress("2001:db8:1:2::1")!, ipv6PrefixLength: 64)) != nil)
        #expect(ledger.admit(PeerGroup(IPAddress("2001:db8:1:2:ffff:1:2:3")!, ipv6PrefixLength: 64)) == nil)
        #expect(ledger.admit(PeerGroup(IPAddress("2001:db8:1:3::1")!, ipv6PrefixLength: 64)) != nil)
        #expect(ledger.admit(Self.group("192.0.2.9")) != nil)
        #expect(ledger.admit(PeerGroup(IPAddress("::ffff:192.0.2.9")!, ipv6PrefixLength: 64)) == nil)
        #expect(PeerGroup(IPAddress("2001:db8:1:2::1")!, ipv6PrefixLength: 64).description == "2001:db8:1:2::/64")
    }

    @Test func aConnectionAndAGroupEachHaveTheirBudget() {
        var ledger = Self.ledger()
        let ids = Self.fill(&ledger, "192.0.2.1", count: 3, bytes: 900)
        #expect(ledger.hold(101, by: ids[0]) == .refused(.unauthenticatedBytes))
        #expect(ledger.hold(100, by: ids[0]) == .held(evicting: []))
        // 2800 held by the group; its share is 3000.
        let fourth = ledger.admit(Self.group("192.0.2.1"))!
        #expect(ledger.hold(200, by: fourth) == .held(evicting: []))
        #expect(ledger.hold(1, by: fourth) == .refused(.unauthenticatedBytesPerPeer))
        #expect(ledger.held == 3000 && ledger.held(by: Self.group("192.0.2.1")) == 3000)
        // Released bytes may be held again; a refused read changed nothing.
        ledger.release(ids[0])
        #expect(ledger.held == 2000)
        #expect(ledger.hold(1000, by: fourth) == .refused(.unauthenticatedBytes))
        #expect(ledger.hold(800, by: fourth) == .held(evicting: []))
        ledger.leave(fourth)
        #expect(ledger.held == 1800)
    }

    @Test func theShareDefaultsToASixteenthOfTheTotal() {
        var limits = ConnectionLimits()
        #expect(limits.unauthenticatedBytesPerPeer == 1 << 20)
        limits.unauthenticatedBytesTotal = 64 << 20
        #expect(limits.unauthenticatedBytesPerPeer == 4 << 20)
        limits.unauthenticatedBytesPerPeerSetting = 128 << 20
        #expect(limits.unauthenticatedBytesPerPeer == 64 << 20, "never more than the total")
    }

    @Test func aFullTotalEvictsTheLargestGroupsLargestConnection() {
        var ledger = Self.ledger(perConnection: 2000)
        let hog = Self.fill(&ledger, "192.0.2.66", count: 3, bytes: 1000)
        _ = Self.fill(&ledger, "192.0.2.2", count: 2, bytes: 1000)
        _ = Self.fill(&ledger, "192.0.2.3", count: 2, bytes: 1000)
        _ = Self.fill(&ledger, "192.0.2.4", count: 2, bytes: 1000)
        #expect(ledger.held == 9000)
        let mostOfHog = ledger.admit(Self.group("192.0.2.66"))
        #expect(mostOfHog == nil || ledger.hold(1, by: mostOfHog!) == .refused(.unauthenticatedBytesPerPeer))
        // The total is 10 000: an honest newcomer's 1500 bytes evict one of the hog's.
        let device = ledger.admit(Self.group("198.51.100.1"))!
        #expect(ledger.hold(500, by: device) == .held(evicting: []))
        guard case .held(let evicted) = ledger.hold(1000, by: device) else {
            Issue.record("refused")
            return
        }
        #expect(evicted.count == 1 && hog.contains(evicted[0]))
        #expect(ledger.held == 9500 && ledger.held(by: Self.group("192.0.2.66")) == 2000)
        // The evicted connection may hold nothing more until it leaves.
        #expect(ledger.hold(1, by: evicted[0]) == .refused(.unauthenticatedBytesTotal))
        ledger.leave(evicted[0])
        #expect(ledger.held == 9500)
    }

    @Test func evictionGoesOnUntilTheReadFitsAndTakesTheLargestEachTime() {
        var ledger = Self.ledger(perConnection: 1000, perPeer: 4000, total: 6000)
        let a = Self.fill(&ledger, "192.0.2.1", count: 4, bytes: 1000)  // 4000
        let b = Self.fill(&ledger, "192.0.2.2", count: 2, bytes: 1000)  // 2000
        let c = ledger.admit(Self.group("192.0.2.3"))!
        // 1000 more: one of a's; then a holds 3000 (still the largest).
        #expect(ledger.hold(1000, by: c) == .held(evicting: [a[0]]))
        let d = ledger.admit(Self.group("192.0.2.4"))!
        let e = ledger.admit(Self.group("192.0.2.4"))!
        #expect(ledger.hold(1000, by: d) == .held(evicting: [a[1]]))
        // a 2000, b 2000, c 1000, d 1000: group 4 adding 1000 makes 2000, equal to a's and b's: a tie keeps them.
        #expect(ledger.hold(1000, by: e) == .refused(.unauthenticatedBytesTotal))
        #expect(ledger.held == 6000)
        // A read that needs two evictions: b's and a's connections go alternately.
        ledger.release(c)
        ledger.release(d)
        #expect(ledger.held == 4000)
        let f = ledger.admit(Self.group("192.0.2.5"))!
        #expect(ledger.hold(1000, by: f) == .held(evicting: []))
        #expect(ledger.hold(1000, by: ledger.admit(Self.group("192.0.2.6"))!) == .held(evicting: []))
        let g = ledger.admit(Self.group("192.0.2.7"))!
        guard case .held(let evicted) = ledger.hold(500, by: g) else {
            Issue.record("refused")
            return
        }
        #expect(evicted.count == 1 && (a + b).contains(evicted[0]))
        _ = b
    }

    @Test func theLargestReaderIsRefusedAndNothingIsEvictedForIt() {
        var ledger = Self.ledger(perConnection: 1000, perPeer: 5000, total: 6000)
        let hog = Self.fill(&ledger, "192.0.2.66", count: 4, bytes: 1000)
        _ = Self.fill(&ledger, "192.0.2.2", count: 2, bytes: 1000)
        let more = ledger.admit(Self.group("192.0.2.66"))!
        #expect(ledger.hold(10, by: more) == .refused(.unauthenticatedBytesTotal))
        #expect(ledger.held == 6000)
        for id in hog { #expect(ledger.held(by: id) == 1000) }
    }

    @Test func aFullTotalOfSmallGroupsStillAdmitsASmallerReader() {
        // 10 groups of 1000: a reader of 100 evicts one of them (each holds more than it would).
        var ledger = Self.ledger(perConnection: 1000, perPeer: 1000, total: 10_000)
        for host in 0..<10 { _ = Self.fill(&ledger, "192.0.2.\(host + 1)", count: 1, bytes: 1000) }
        let reader = ledger.admit(Self.group("198.51.100.1"))!
        guard case .held(let evicted) = ledger.hold(100, by: reader) else {
            Issue.record("refused")
            return
        }
        #expect(evicted.count == 1)
        #expect(ledger.held == 9100)
    }

    @Test func aMovedConnectionTakesItsBytesAndItsPlaceToItsClient() {
        var ledger = Self.ledger(perConnection: 1000, perPeer: 1500, total: 10_000, connections: 2)
        let proxied = ledger.admit(nil)!
        #expect(ledger.group(of: proxied) == .connection(proxied))
        #expect(ledger.hold(800, by: proxied) == .held(evicting: []))
        let client = Self.group("192.0.2.1")
        #expect(ledger.move(proxied, to: client) == nil)
        #expect(ledger.held(by: client) == 800 && ledger.held(by: .connection(proxied)) == 0)
        #expect(ledger.connectionCount(of: .connection(proxied)) == 0)
        let other = ledger.admit(nil)!
        #expect(ledger.hold(800, by: other) == .held(evicting: []))
        #expect(ledger.move(other, to: client) == .unauthenticatedBytesPerPeer)
        ledger.release(other)
        #expect(ledger.move(other, to: client) == nil)
        let third = ledger.admit(nil)!
        #expect(ledger.move(third, to: client) == .connectionsPerPeer)
        #expect(ledger.held == 800)
        ledger.leave(proxied)
        ledger.leave(other)
        ledger.leave(third)
        #expect(ledger.held == 0 && ledger.connectionCount == 0)
    }
}
