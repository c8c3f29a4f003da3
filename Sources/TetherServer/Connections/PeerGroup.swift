/// Whom a connection's unauthenticated bytes and its place in `connections_per_peer` are
/// counted for: an IPv4 address, an IPv6 network of `ipv6_prefix_length` bits (one host's /64
/// holds as many addresses as it likes), or — for a connection from a trusted proxy that has
/// not named its client yet — that connection alone.
struct PeerGroup: Sendable, Hashable, CustomStringConvertible {
    private enum Key: Hashable {
        case network(IPAddress, Int)
        case connection(UInt64)
        case unknown
    }

    private let key: Key

    /// The group of `address`: the address itself (IPv4), or its network (IPv6).
    init(_ address: IPAddress, ipv6PrefixLength: Int) {
        let bits = address.isIPv4 ? 32 : max(1, min(128, ipv6PrefixLength))
        key = .network(address.masked(bits), bits)
    }

    private init(key: Key) { self.key = key }

    /// A connection counted on its own (a trusted proxy's, until it names its client).
    static func connection(_ id: ConnectionID) -> PeerGroup { PeerGroup(key: .connection(id.value)) }

    /// A peer whose address the socket did not give (never seen on TCP).
    static let unknown = PeerGroup(key: .unknown)

    var description: String {
        switch key {
        case .network(let address, let bits): address.isIPv4 || bits == 128 ? "\(address)" : "\(address)/\(bits)"
        case .connection(let id): "proxied connection #\(id)"
        case .unknown: "unknown"
        }
    }
}

/// One admitted connection in ``AdmissionLedger``.
struct ConnectionID: Sendable, Hashable, Comparable {
    let value: UInt64
    static func < (a: ConnectionID, b: ConnectionID) -> Bool { a.value < b.value }
}
