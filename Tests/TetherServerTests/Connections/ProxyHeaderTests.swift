import Testing
@testable import TetherServer

/// ``ProxyHeader``: PROXY protocol v2 headers as proxies send them, every prefix of them, and
/// malformed or random bytes (never a crash, never an address out of nothing).
@Suite struct ProxyHeaderTests {
    static let v4 = ProxyHeader.make(source: IPAddress("192.0.2.7")!, destination: IPAddress("198.51.100.1")!)

    @Test func anIPv4HeaderNamesItsSource() {
        #expect(Self.v4.count == 28)
        #expect(ProxyHeader.parse(Self.v4) == .header(source: IPAddress("192.0.2.7"), length: 28))
        // What follows the header is not part of it.
        #expect(ProxyHeader.parse(Self.v4 + Array("GET / HTTP/1.1\r\n".utf8)) == .header(source: IPAddress("192.0.2.7"), length: 28))
    }

    @Test func anIPv6HeaderWithTLVsNamesItsSource() {
        let tlv: [UInt8] = [0x04, 0x00, 0x03, 0x61, 0x62, 0x63]  // PP2_TYPE_NOOP
        let header = ProxyHeader.make(source: IPAddress("2001:db8::1")!, tlv: tlv)
        #expect(ProxyHeader.parse(header) == .header(source: IPAddress("2001:db8::1"), length: 16 + 36 + 6))
        // A mapped IPv4 source is IPv4.
        let mapped = ProxyHeader.make(source: IPAddress(bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 0, 2, 7])!)
        #expect(ProxyHeader.parse(mapped) == .header(source: IPAddress("192.0.2.7"), length: 28))
        var sixteen = Array(ProxyHeader.signature) + [0x21, 0x21, 0x00, 36]
        sixteen += [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1] + [UInt8](repeating: 9, count: 20)
        #expect(ProxyHeader.parse(sixteen) == .header(source: IPAddress("2001:db8::1"), length: 52))
    }

    @Test func localAndAddresslessHeadersNameNobody() {
        #expect(ProxyHeader.parse(ProxyHeader.make(source: nil)) == .header(source: nil, length: 16))
        // LOCAL with an address block: the block is ignored.
        var local = Self.v4
        local[12] = 0x20
        #expect(ProxyHeader.parse(local) == .header(source: nil, length: 28))
        // PROXY over UNSPEC and UNIX: no IP address.
        #expect(ProxyHeader.parse(ProxyHeader.signature + [0x21, 0x00, 0x00, 0x00]) == .header(source: nil, length: 16))
        let unix = ProxyHeader.signature + [0x21, 0x31, 0x00, 0xD8] + [UInt8](repeating: 0x2F, count: 216)
        #expect(ProxyHeader.parse(unix) == .header(source: nil, length: 232))
    }

    @Test func everyPrefixOfAHeaderNeedsMore() {
        for header in [Self.v4, ProxyHeader.make(source: IPAddress("2001:db8::1")!, tlv: [1, 0, 2, 0x68, 0x32])] {
            for count in 0..<header.count { #expect(ProxyHeader.parse(Array(header.prefix(count))) == .needMore, "\(count)") }
        }
    }

    @Test func malformedHeadersAreRefused() {
        func invalid(_ bytes: [UInt8]) -> Bool { if case .invalid = ProxyHeader.parse(bytes) { true } else { false } }
        #expect(invalid(Array("GET / HTTP/1.1\r\n\r\n".utf8)))
        #expect(invalid(Array("PROXY TCP4 192.0.2.7 198.51.100.1 40000 8056\r\n".utf8)), "v1 is not read")
        #expect(invalid([0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0B]))  // signature's last byte
        #expect(invalid([0x0D, 0x0A, 0x0E]), "a wrong byte is refused before the signature is whole")
        var bytes = Self.v4
        bytes[12] = 0x11  // version 1
        #expect(invalid(bytes))
        bytes = Self.v4
        bytes[12] = 0x22  // command 2
        #expect(invalid(bytes))
        bytes = Self.v4
        bytes[13] = 0x41  // family 4
        #expect(invalid(bytes))
        bytes = Self.v4
        bytes[13] = 0x12  // UDP
        #expect(invalid(bytes))
        bytes = Self.v4
        bytes[13] = 0x13  // transport 3
        #expect(invalid(bytes))
        bytes = Self.v4
        bytes[15] = 8  // an IPv4 block of 8 bytes
        #expect(invalid(Array(bytes.prefix(24))))
        bytes = Self.v4
        bytes[13] = 0x21  // IPv6 with an IPv4-sized block
        #expect(invalid(bytes))
        // A length past the bound is refused at once, not waited for.
        #expect(invalid(ProxyHeader.signature + [0x21, 0x11, 0xFF, 0xFF]))
    }

    @Test func randomBytesNeverCrashAndNameOnlyWhatTheyHold() {
        var generator = SplitMix(seed: 46)
        for round in 0..<20_000 {
            // Half of the rounds keep the signature, so the parser goes past it.
            var bytes: [UInt8] = round % 2 == 0 ? ProxyHeader.signature : []
            let extra = Int(generator.next() % 80)
            for _ in 0..<extra { bytes.append(UInt8(truncatingIfNeeded: generator.next())) }
            if round % 4 == 0 && bytes.count > 13 { bytes[12] = 0x21 }
            switch ProxyHeader.parse(bytes) {
            case .needMore: #expect(bytes.count < 16 + ProxyHeader.maxPayload)
            case .invalid: break
            case .header(let source, let length):
                #expect(length <= bytes.count && length >= 16)
                if let source { #expect(bytes[16..<length].starts(with: source.bytes) || bytes[16..<28].starts(with: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF])) }
            }
        }
        // Mutations of a valid header: each byte changed in turn.
        for index in Self.v4.indices {
            for value: UInt8 in [0, 1, 0x7F, 0xFF] {
                var bytes = Self.v4
                bytes[index] = value
                _ = ProxyHeader.parse(bytes)
                _ = ProxyHeader.parse(Array(bytes.prefix(index + 1)))
            }
        }
    }
}

/// A small deterministic generator for the fuzz-ish rounds.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
