import TetherProtocol

/// A subscription set as the server resolved it for one store: the set, the subscriptions the
/// device's grants imposed, the device's parameters and the time it was resolved with. A
/// store's rows are those its held set and the imposed one matched with these values, so a bind
/// resolves them with these, not with the device's current tags, the grants' current
/// subscriptions or the current time: a till moved to another shop, a grant's filter edited,
/// or a window of `now() - 7d`, then changes exactly the rows that differ.
package struct AppliedScope: Sendable, Hashable {
    /// nil: the whole partition (a store under imposed subscriptions only).
    package var set: SubscriptionSet?
    /// What the grants imposed (``SubscriptionScope/init(imposing:schema:parameters:now:)``);
    /// nil: nothing (and every scope recorded before grants could impose).
    package var imposed: SubscriptionSet?
    package var parameters: FilterParameters
    /// Seconds since 1970.
    package var now: Double

    package init(set: SubscriptionSet?, imposed: SubscriptionSet? = nil, parameters: FilterParameters, now: Double) {
        self.set = set
        self.imposed = imposed
        self.parameters = parameters
        self.now = now
    }
}

extension AppliedScope {
    /// The server's name for this scope, sent to the store with the last chunk of the change
    /// that gives it (``SubscriptionChunk/scopeToken``) and named by the store's binds: FNV-1a of
    /// its encoding, never 0 (0 names the scope a store took with its state). A scope without
    /// imposed subscriptions keeps the token it had before grants could impose.
    package var token: UInt64 {
        var w = ByteWriter()
        AppliedScopes.encodeForToken(self, into: &w)
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

    /// Format 3: per scope a presence flag, then a flag and the set, a flag and the imposed set,
    /// the parameters and the time. Format 2 (before grants could impose: the set always, no
    /// imposed set) is still read.
    package var encoded: [UInt8] {
        var w = ByteWriter()
        w.byte(3)  // format
        for scope in [initial, latest, previous] {
            w.bool(scope != nil)
            guard let scope else { continue }
            Self.encodeSets(scope, into: &w)
            Self.encodeValues(scope, into: &w)
        }
        return w.bytes
    }

    package static func decode(_ bytes: [UInt8]) throws(StorageError) -> AppliedScopes {
        do {
            var r = ByteReader(bytes)
            let format = try r.byte("format")
            guard format == 2 || format == 3 else { throw StorageError.corrupt("client file scopes") }
            var scopes: [AppliedScope?] = []
            for _ in 0..<3 { scopes.append(try r.bool("has scope") ? try decodeScope(&r, format: format) : nil) }
            try r.expectEnd()
            return AppliedScopes(initial: scopes[0], latest: scopes[1], previous: scopes[2])
        } catch {
            throw .corrupt("client file scopes")
        }
    }

    /// What ``AppliedScope/token`` digests: a scope with a set and nothing imposed as format 2
    /// encoded it (its token is unchanged), any other behind a marker byte no set begins with.
    static func encodeForToken(_ scope: AppliedScope, into w: inout ByteWriter) {
        if let set = scope.set, scope.imposed == nil {
            set.encode(into: &w)
        } else {
            w.byte(0xFF)
            encodeSets(scope, into: &w)
        }
        encodeValues(scope, into: &w)
    }

    /// The set and the imposed set, each behind a presence flag.
    private static func encodeSets(_ scope: AppliedScope, into w: inout ByteWriter) {
        for set in [scope.set, scope.imposed] {
            w.bool(set != nil)
            set?.encode(into: &w)
        }
    }

    private static func encodeValues(_ scope: AppliedScope, into w: inout ByteWriter) {
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

    private static func decodeScope(_ r: inout ByteReader, format: UInt8) throws(WireDecodeError) -> AppliedScope {
        // Format 2 always has a set and never an imposed one.
        let hasSet = format == 2 ? true : try r.bool("has set")
        let set = hasSet ? try SubscriptionSet.decode(from: &r) : nil
        let hasImposed = format == 2 ? false : try r.bool("has imposed set")
        let imposed = hasImposed ? try SubscriptionSet.decode(from: &r) : nil
        let name = try r.string("name", limit: ProtocolLimits.maxTextBytes)
        let id = try r.bool("has id") ? try r.string("id", limit: ProtocolLimits.maxTextBytes) : nil
        var tags: [String: String] = [:]
        for _ in 0..<(try r.count("tags", minimumElementBytes: 2, limit: 10_000)) {
            tags[try r.string("tag key", limit: ProtocolLimits.maxTextBytes)] = try r.string("tag value", limit: ProtocolLimits.maxTextBytes)
        }
        let milliseconds = try r.int64("now")
        return AppliedScope(
            set: set, imposed: imposed, parameters: FilterParameters(name: name, id: id, tags: tags), now: Double(milliseconds) / 1000)
    }
}
