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

extension AppliedScope {
    /// The server's name for this scope, sent to the store with the last chunk of the change
    /// that gives it (``SubscriptionChunk/scopeToken``) and named by the store's binds: FNV-1a of
    /// its encoding, never 0 (0 names the scope a store took with its state).
    package var token: UInt64 {
        var w = ByteWriter()
        AppliedScopes.encode(self, into: &w)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in w.bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash == 0 ? 1 : hash
    }
}

/// The scopes a client file's store was given: the one it took with its state (``initial``,
/// token 0), and the last two changes (a store cut off before it applied the latest still holds
/// the one before, and names it by its token). Stored as one blob.
package struct AppliedScopes: Sendable, Hashable {
    package var initial: AppliedScope?
    package var latest: AppliedScope?
    package var previous: AppliedScope?

    package init(initial: AppliedScope? = nil, latest: AppliedScope? = nil, previous: AppliedScope? = nil) {
        self.initial = initial
        self.latest = latest
        self.previous = previous
    }

    /// These scopes with `scope` recorded: as the initial one (a new store's state), or as the
    /// latest change.
    package static func recording(_ scope: AppliedScope, initial: Bool, over current: AppliedScopes?) -> AppliedScopes {
        var scopes = current ?? AppliedScopes()
        if initial {
            scopes.initial = scope
        } else if scopes.latest != scope {
            scopes.previous = scopes.latest
            scopes.latest = scope
        }
        return scopes
    }

    /// The scope a store names by `token` (0: the one it took with its state).
    package func scope(token: UInt64) -> AppliedScope? {
        if token == 0 { return initial }
        return [latest, previous].compactMap { $0 }.first { $0.token == token }
    }

    package var encoded: [UInt8] {
        var w = ByteWriter()
        w.byte(2)  // format
        for scope in [initial, latest, previous] {
            w.bool(scope != nil)
            if let scope { Self.encode(scope, into: &w) }
        }
        return w.bytes
    }

    package static func decode(_ bytes: [UInt8]) throws(StorageError) -> AppliedScopes {
        do {
            var r = ByteReader(bytes)
            guard try r.byte("format") == 2 else { throw StorageError.corrupt("client file scopes") }
            var scopes: [AppliedScope?] = []
            for _ in 0..<3 { scopes.append(try r.bool("has scope") ? try decodeScope(&r) : nil) }
            try r.expectEnd()
            return AppliedScopes(initial: scopes[0], latest: scopes[1], previous: scopes[2])
        } catch {
            throw .corrupt("client file scopes")
        }
    }

    static func encode(_ scope: AppliedScope, into w: inout ByteWriter) {
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
