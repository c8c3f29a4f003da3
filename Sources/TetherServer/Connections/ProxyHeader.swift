/// The PROXY protocol version 2 header a load balancer puts at the start of a connection to
/// name the client (haproxy's `proxy-protocol.txt`, section 2.2): a 12-byte signature, the
/// version and command, the address family and transport, the length of what follows, the
/// addresses, then TLVs (skipped). Read only from `trusted_proxies` with `proxy_protocol = true`.
enum ProxyHeader {
    /// What the bytes read so far hold.
    enum Parse: Sendable, Equatable {
        /// The header is not complete yet.
        case needMore
        /// A complete header of `length` bytes; `source` is the client (nil for a LOCAL
        /// connection — the proxy's own, e.g. a health check — or a family without an IP address).
        case header(source: IPAddress?, length: Int)
        /// Not a PROXY v2 header (the connection is closed); why, for the log.
        case invalid(String)
    }

    static let signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]
    /// Addresses and TLVs longer than this are refused (a proxy's TLVs are a few hundred bytes).
    static let maxPayload = 4096

    static func parse(_ bytes: [UInt8]) -> Parse {
        let prefix = min(bytes.count, signature.count)
        guard bytes[0..<prefix].elementsEqual(signature[0..<prefix]) else { return .invalid("no PROXY protocol v2 signature") }
        guard bytes.count >= 16 else { return .needMore }
        guard bytes[12] >> 4 == 2 else { return .invalid("PROXY protocol version \(bytes[12] >> 4), not 2") }
        let command = bytes[12] & 0x0F
        guard command <= 1 else { return .invalid("unknown PROXY command \(command)") }
        let family = bytes[13] >> 4
        let transport = bytes[13] & 0x0F
        guard family <= 3, transport <= 2 else { return .invalid("unknown address family or transport 0x\(String(bytes[13], radix: 16))") }
        let payload = Int(bytes[14]) << 8 | Int(bytes[15])
        guard payload <= maxPayload else { return .invalid("a PROXY header of \(payload) bytes (at most \(maxPayload))") }
        guard bytes.count >= 16 + payload else { return .needMore }
        let length = 16 + payload
        // LOCAL: the proxy's own connection; its address block is ignored.
        guard command == 1 else { return .header(source: nil, length: length) }
        let addressBytes: Int
        switch family {
        case 1: addressBytes = 4
        case 2: addressBytes = 16
        default: return .header(source: nil, length: length)  // UNSPEC or UNIX: no IP address
        }
        guard transport == 1 else { return .invalid("a PROXY header for a transport other than TCP") }
        guard payload >= addressBytes * 2 + 4 else { return .invalid("a PROXY address block of \(payload) bytes, too short") }
        guard let source = IPAddress(bytes: Array(bytes[16..<16 + addressBytes])) else { return .invalid("an unreadable source address") }
        return .header(source: source, length: length)
    }

    /// A PROXY v2 header naming `source` (for tests and tools); `tlv` appended as is.
    static func make(source: IPAddress?, destination: IPAddress? = nil, sourcePort: UInt16 = 40000, tlv: [UInt8] = []) -> [UInt8] {
        guard let source else { return signature + [0x20, 0x00, UInt8(tlv.count >> 8), UInt8(tlv.count & 0xFF)] + tlv }
        let destination = destination ?? source
        let payload = source.bytes + destination.bytes + [UInt8(sourcePort >> 8), UInt8(sourcePort & 0xFF), 0x1F, 0x78] + tlv
        let family: UInt8 = source.isIPv4 ? 0x11 : 0x21
        return signature + [0x21, family, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] + payload
    }
}
