extension SubscriptionSet {
    /// The count, then per subscription its table and, after a flag, its filter's text.
    package func encode(into w: inout ByteWriter) {
        w.varint(subscriptions.count)
        for subscription in subscriptions {
            w.string(subscription.table)
            if let filter = subscription.filter {
                w.bool(true)
                w.string(filter)
            } else {
                w.bool(false)
            }
        }
    }

    /// Reads a set as ``encode(into:)`` writes it; the order and uniqueness are restored (a
    /// device's set is sorted by the same rule) and the count is bounded.
    package static func decode(from r: inout ByteReader) throws(WireDecodeError) -> SubscriptionSet {
        let count = try r.count("subscription count", minimumElementBytes: 2, limit: SubscriptionSetLimits.maxSubscriptions)
        var subscriptions: [Subscription] = []
        for _ in 0..<count {
            let table = try r.string("subscription table", limit: ProtocolLimits.maxNameBytes)
            let filter: String? = try r.bool("has filter") ? try r.string("subscription filter", limit: SubscriptionFilterLimits.maxTextBytes) : nil
            subscriptions.append(Subscription(table: table, filter: filter))
        }
        do {
            return try SubscriptionSet(subscriptions)
        } catch {
            throw .malformed(field: "subscriptions", reason: error.description)
        }
    }
}

extension SubscriptionRequest {
    /// A flags byte (bit 0: `held` follows, bit 1: `wanted` follows, bit 2: the token of a
    /// whole-partition store follows), then `held` and its token (8 bytes, big-endian) — or,
    /// without `held`, the token alone when it is not 0 (a store given a grant's subscriptions
    /// by a change: bit 2 is never set otherwise, so a server that does not know it never sees
    /// it) — then `wanted`.
    package func encode(into w: inout ByteWriter) {
        var flags: UInt8 = 0
        if held != nil { flags |= 1 }
        if wanted != nil { flags |= 2 }
        if held == nil, heldToken != 0 { flags |= 4 }
        w.byte(flags)
        if let held {
            held.encode(into: &w)
            w.bigEndian(heldToken)
        } else if heldToken != 0 {
            w.bigEndian(heldToken)
        }
        wanted?.encode(into: &w)
    }

    package static func decode(from r: inout ByteReader) throws(WireDecodeError) -> SubscriptionRequest {
        let flags = try r.byte("subscription flags")
        guard flags & ~0x07 == 0, flags & 0x05 != 0x05 else {
            throw .malformed(field: "subscription flags", reason: "unknown flag bits")
        }
        var held: SubscriptionSet? = nil
        var token: UInt64 = 0
        if flags & 1 != 0 {
            held = try SubscriptionSet.decode(from: &r)
            token = try r.bigEndianUInt64("held scope token")
        } else if flags & 4 != 0 {
            token = try r.bigEndianUInt64("held scope token")
        }
        let wanted = flags & 2 != 0 ? try SubscriptionSet.decode(from: &r) : nil
        return SubscriptionRequest(held: held, heldToken: token, wanted: wanted)
    }
}

extension ByteWriter {
    /// 8 bytes, most significant first (digests and tokens).
    package mutating func bigEndian(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { byte(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}

extension ByteReader {
    /// 8 bytes, most significant first.
    package mutating func bigEndianUInt64(_ field: StaticString) throws(WireDecodeError) -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(try byte(field)) }
        return value
    }
}
