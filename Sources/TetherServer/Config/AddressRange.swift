/// One entry of `[limits] trusted_proxies`: an address (`127.0.0.2`, `::1`) or a CIDR range
/// (`10.0.0.0/8`, `fd00::/8`). IPv4-mapped IPv6 ranges (`::ffff:10.0.0.0/104`) are IPv4 ranges.
package struct AddressRange: Sendable, Hashable, CustomStringConvertible {
    /// The network, bits past `prefixLength` cleared.
    package let network: IPAddress
    package let prefixLength: Int

    package init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, let address = IPAddress(first) else { return nil }
        let full = address.bytes.count * 8
        var bits = full
        if parts.count == 2 {
            guard let value = Int(parts[1]), parts[1].allSatisfy(\.isNumber) else { return nil }
            // A mapped IPv6 range counts its bits over the 128 of IPv6.
            let mapped = address.isIPv4 && first.contains(":")
            bits = mapped ? value - 96 : value
            guard (0...full).contains(bits), !mapped || value <= 128 else { return nil }
        }
        network = address.masked(bits)
        prefixLength = bits
    }

    package func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == network.bytes.count && address.masked(prefixLength) == network
    }

    package var description: String { "\(network)/\(prefixLength)" }
}

extension [AddressRange] {
    /// Whether any range holds `address`.
    func holds(_ address: IPAddress) -> Bool { contains { $0.contains(address) } }
}
