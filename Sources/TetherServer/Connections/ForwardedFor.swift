/// The client an `X-Forwarded-For` header names, believed only from `trusted_proxies`: each
/// proxy appends the address it received the request from, so the header is read from the
/// right, through the trusted proxies, to the first address that is not one — what a client
/// writes itself stays to the left of it and is never believed.
enum ForwardedFor {
    /// The client `header` names as seen from `peer` (the connection's address): nil when
    /// `peer` is not trusted, the header names nobody, or an entry right of the client cannot
    /// be read. When every entry is a trusted proxy, the left-most.
    static func client(_ header: String, peer: IPAddress, trusted: [AddressRange]) -> IPAddress? {
        guard trusted.holds(peer) else { return nil }
        var last: IPAddress?
        for entry in header.split(separator: ",").reversed() {
            guard let address = address(entry) else { return nil }
            if !trusted.holds(address) { return address }
            last = address
        }
        return last
    }

    /// One entry: `192.0.2.7`, `192.0.2.7:4711`, `2001:db8::1`, `[2001:db8::1]:4711`, `"[2001:db8::1]"`.
    static func address(_ entry: Substring) -> IPAddress? {
        var text = entry.trimmingCharacters(in: " \t\"")
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            text = String(text[text.index(after: text.startIndex)..<close])
        } else if text.filter({ $0 == ":" }).count == 1 {
            text = String(text.prefix { $0 != ":" })
        }
        return IPAddress(text)
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
