#if canImport(Glibc)
import Glibc
#endif

/// An IP address as its bytes: 4 for IPv4, 16 for IPv6. An IPv4-mapped IPv6 address
/// (`::ffff:192.0.2.7`, as a dual-stack listener reports IPv4 peers) is its IPv4 address, so
/// both spellings of one host are one peer.
package struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    package let bytes: [UInt8]

    /// 4 or 16 bytes; nil for any other count.
    package init?(bytes: [UInt8]) {
        switch bytes.count {
        case 4: self.bytes = bytes
        case 16 where bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF:
            self.bytes = Array(bytes[12..<16])
        case 16: self.bytes = bytes
        default: return nil
        }
    }

    /// `192.0.2.7`, `2001:db8::1`, `[2001:db8::1]`, `fe80::1%eth0` (the zone is dropped).
    package init?(_ text: some StringProtocol) {
        var text = String(text)
        if text.hasPrefix("[") && text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if let zone = text.firstIndex(of: "%") { text = String(text[..<zone]) }
        guard !text.isEmpty, text.utf8.count < 64 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.init(bytes: withUnsafeBytes(of: &v4) { Array($0) })
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        self.init(bytes: withUnsafeBytes(of: &v6) { Array($0) })
    }

    package var isIPv4: Bool { bytes.count == 4 }

    /// The address with every bit past the first `bits` cleared.
    package func masked(_ bits: Int) -> IPAddress {
        var out = bytes
        for index in out.indices {
            let keep = max(0, min(8, bits - index * 8))
            out[index] &= keep == 8 ? 0xFF : ~(0xFF >> UInt8(keep))
        }
        return IPAddress(unchecked: out)
    }

    private init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    package var description: String {
        var text = [CChar](repeating: 0, count: 64)
        var copy = bytes
        let family = isIPv4 ? AF_INET : AF_INET6
        guard copy.withUnsafeMutableBytes({ inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }) != nil else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
