import Testing
@testable import TetherServer

/// ``IPAddress``, ``AddressRange`` (`trusted_proxies`) and ``ForwardedFor``: reading
/// addresses, matching ranges, and which `X-Forwarded-For` entry is the client.
@Suite struct PeerAddressTests {
    @Test func addressesAreReadInEverySpelling() {
        #expect(IPAddress("192.0.2.7")?.bytes == [192, 0, 2, 7])
        #expect(IPAddress("::ffff:192.0.2.7") == IPAddress("192.0.2.7"))
        #expect(IPAddress("[2001:db8::1]") == IPAddress("2001:db8:0:0::1"))
        #expect(IPAddress("fe80::1%eth0") == IPAddress("fe80::1"))
        #expect(IPAddress("2001:DB8::1")?.description == "2001:db8::1")
        #expect(IPAddress("::ffff:10.0.0.1")?.description == "10.0.0.1")
        for bad in ["", "1.2.3", "1.2.3.256", "192.0.2.7:80", "unknown", "2001:db8::1::2", "0x7f.1", " 1.2.3.4"] {
            #expect(IPAddress(bad) == nil, "\(bad)")
        }
        #expect(IPAddress(bytes: [1, 2, 3]) == nil)
        #expect(IPAddress("192.0.2.255")!.masked(24) == IPAddress("192.0.2.0"))
        #expect(IPAddress("2001:db8:1:2:3:4:5:6")!.masked(64) == IPAddress("2001:db8:1:2::"))
        #expect(IPAddress("2001:db8:1:2:3:4:5:6")!.masked(60) == IPAddress("2001:db8:1::"))
        #expect(IPAddress("255.255.255.255")!.masked(0) == IPAddress("0.0.0.0"))
    }

    @Test func rangesHoldTheirAddressesOnly() {
        let ten = AddressRange("10.0.0.0/8")!
        #expect(ten.contains(IPAddress("10.200.3.4")!) && !ten.contains(IPAddress("11.0.0.1")!))
        #expect(ten.contains(IPAddress("::ffff:10.1.2.3")!), "a mapped address is IPv4")
        #expect(!ten.contains(IPAddress("::a00:1")!), "an IPv6 address is never in an IPv4 range")
        let host = AddressRange("127.0.0.2")!
        #expect(host.prefixLength == 32 && host.contains(IPAddress("127.0.0.2")!) && !host.contains(IPAddress("127.0.0.3")!))
        #expect(AddressRange("10.1.2.3/8") == ten, "host bits are cleared")
        let v6 = AddressRange("fd00::/8")!
        #expect(v6.contains(IPAddress("fd12:3456::1")!) && !v6.contains(IPAddress("fe80::1")!))
        #expect(AddressRange("::ffff:10.0.0.0/104") == ten)
        #expect(AddressRange("0.0.0.0/0")!.contains(IPAddress("203.0.113.1")!))
        #expect(AddressRange("::1")!.contains(IPAddress("::1")!))
        for bad in ["10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/", "/8", "fd00::/129", "10.0.0.0/8/9", "example.com", "10.0.0.0/+8", "::ffff:10.0.0.0/95"] {
            #expect(AddressRange(bad) == nil, "\(bad)")
        }
    }

    static let trusted = [AddressRange("10.0.0.0/8")!, AddressRange("127.0.0.2")!]

    @Test func theClientIsTheRightMostAddressThatIsNotATrustedProxy() {
        let proxy = IPAddress("10.0.0.5")!
        func client(_ header: String, from peer: IPAddress = proxy) -> String? {
            ForwardedFor.client(header, peer: peer, trusted: Self.trusted)?.description
        }
        #expect(client("192.0.2.7") == "192.0.2.7")
        #expect(client("203.0.113.1, 192.0.2.7") == "192.0.2.7", "what the client wrote is left of what the proxy appended")
        #expect(client("203.0.113.1, 192.0.2.7, 10.1.1.1, 127.0.0.2") == "192.0.2.7")
        #expect(client("10.1.1.1, 10.2.2.2") == "10.1.1.1", "every entry a trusted proxy: the left-most")
        #expect(client("garbage, 192.0.2.7") == "192.0.2.7")
        #expect(client("192.0.2.7, garbage") == nil, "an entry right of the client that cannot be read")
        #expect(client("") == nil)
        #expect(client("192.0.2.7:4711") == "192.0.2.7")
        #expect(client("[2001:db8::1]:4711") == "2001:db8::1")
        #expect(client(" \"[2001:db8::2]\" ") == "2001:db8::2")
        #expect(client("2001:db8::3") == "2001:db8::3")
        #expect(client("unknown") == nil)
        // From an untrusted peer nothing is believed.
        #expect(client("192.0.2.7", from: IPAddress("203.0.113.50")!) == nil)
        #expect(client("192.0.2.7", from: IPAddress("127.0.0.3")!) == nil)
    }
}
