import TetherProtocol

/// A subscription set as the server resolved it for one store: the set, the device's
/// parameters and the time it was resolved with. A store's rows are those its held set matched
/// with these values, so a bind resolves the held set with them, not with the device's current
/// tags or the current time: a till moved to another shop, or a window of `now() - 7d`, then
/// changes exactly the rows that differ.
package struct AppliedScope: Sendable, Hashable {
    package var set: SubscriptionSet
    package var parameters: FilterParameters
    /// Seconds since 1970.
    package var now: Double

    package init(set: SubscriptionSet, parameters: FilterParameters, now: Double) {
        self.set = set
        self.parameters = parameters
        self.now = now
    }
}

/// The scopes a client file's store was last given: the latest and the one before (a store
/// cut off before it applied the latest still holds the one before). Stored as one blob.
package struct AppliedScopes: Sendable, Hashable {
    package var latest: AppliedScope
    package var previous: AppliedScope?

    package init(latest: AppliedScope, previous: AppliedScope? = nil) {
        self.latest = latest
        self.previous = previous
    }

    /// These scopes with `scope` recorded as the latest (nil: none before).
    package static func recording(_ scope: AppliedScope, over current: AppliedScopes?) -> AppliedScopes {
        guard let current else { return AppliedScopes(latest: scope) }
        if current.latest == scope { return current }
        return AppliedScopes(latest: scope, previous: current.latest)
    }

    /// The scope recorded for the set with `digest`, the latest first.
    package func scope(digest: UInt64) -> AppliedScope? {
        if latest.set.digest == digest { return latest }
        if let previous, previous.set.digest == digest { return previous }
        return nil
    }

    package var encoded: [UInt8] {
        var w = ByteWriter()
        w.byte(1)  // format
        Self.encode(latest, into: &w)
        w.bool(previous != nil)
        if let previous { Self.encode(previous, into: &w) }
        return w.bytes
    }

    package static func decode(_ bytes: [UInt8]) throws(StorageError) -> AppliedScopes {
        do {
            var r = ByteReader(bytes)
            guard try r.byte("format") == 1 else { throw StorageError.corrupt("client file scopes") }
            let latest = try decodeScope(&r)
            let previous = try r.bool("has previous") ? try decodeScope(&r) : nil
            try r.expectEnd()
            return AppliedScopes(latest: latest, previous: previous)
        } catch {
            throw .corrupt("client file scopes")
        }
    }

    private static func encode(_ scope: AppliedScope, into w: inout ByteWriter) {
        scope.set.encode(into: &w)
        w.string(scope.parameters.name)
        w.bool(scope.parameters.id != nil)
        if let id = scope.parameters.id { w.string(id) }
        w.varint(scope.parameters.tags.count)
        for (key, value) in scope.parameters.tags.sorted(by: { $0.key < $1.key }) {
            w.string(key)
            w.string(value)
        }
        w.varint(Int64((scope.now * 1000).rounded(.down)))
    }

    private static func decodeScope(_ r: inout ByteReader) throws(WireDecodeError) -> AppliedScope {
        let set = try SubscriptionSet.decode(from: &r)
        let name = try r.string("name", limit: ProtocolLimits.maxTextBytes)
        let id = try r.bool("has id") ? try r.string("id", limit: ProtocolLimits.maxTextBytes) : nil
        var tags: [String: String] = [:]
        for _ in 0..<(try r.count("tags", minimumElementBytes: 2, limit: 10_000)) {
            tags[try r.string("tag key", limit: ProtocolLimits.maxTextBytes)] = try r.string("tag value", limit: ProtocolLimits.maxTextBytes)
        }
        let milliseconds = try r.int64("now")
        return AppliedScope(set: set, parameters: FilterParameters(name: name, id: id, tags: tags), now: Double(milliseconds) / 1000)
    }
}
