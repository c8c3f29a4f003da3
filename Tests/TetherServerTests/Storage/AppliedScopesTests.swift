import Testing
import TetherProtocol
@testable import TetherServer

/// ``AppliedScopes``' blob: the imposed set round-trips (format 3), a format-2 blob (before grants
/// could impose) still reads as scopes with nothing imposed, and a scope without imposition keeps
/// the token it had then (stores name their rows by it).
@Suite struct AppliedScopesTests {
    static let parameters = FilterParameters(name: "till", id: "d1", tags: ["shop": "1", "zone": "a"])
    static let set = try! SubscriptionSet([Subscription(table: "items", filter: "shop = {tag:shop}"), Subscription(table: "notes")])
    static let imposed = try! SubscriptionSet([Subscription(table: "items", filter: "zone = {tag:zone}")])

    /// A scope as format 2 encoded it: the set, then the values.
    static func legacyBytes(_ scope: AppliedScope) -> [UInt8] {
        var w = ByteWriter()
        scope.set!.encode(into: &w)
        w.string(scope.parameters.name)
        w.bool(scope.parameters.id != nil)
        if let id = scope.parameters.id { w.string(id) }
        w.varint(scope.parameters.tags.count)
        for (key, value) in scope.parameters.tags.sorted(by: { $0.key < $1.key }) {
            w.string(key)
            w.string(value)
        }
        w.varint(Int64((scope.now * 1000).rounded(.down)))
        return w.bytes
    }

    static func fnv(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash == 0 ? 1 : hash
    }

    @Test func aFormat2BlobReadsAsNothingImposedAndItsTokensStand() throws {
        let old = AppliedScope(set: Self.set, parameters: Self.parameters, now: 12.25)
        let older = AppliedScope(set: .empty, parameters: FilterParameters(name: "t"), now: 1)
        let blob: [UInt8] = [2, 1] + Self.legacyBytes(old) + [0, 1] + Self.legacyBytes(older)
        let scopes = try AppliedScopes.decode(blob)
        #expect(scopes == AppliedScopes(initial: old, latest: nil, previous: older))
        #expect(scopes.initial?.imposed == nil)
        #expect(old.token == Self.fnv(Self.legacyBytes(old)), "the token a store was given before is still its name")
        #expect(scopes.scope(token: older.token) == older)
    }

    @Test func theImposedSetAndAWholePartitionRoundTripAndChangeTheToken() throws {
        let scopes = [
            AppliedScope(set: nil, imposed: Self.imposed, parameters: Self.parameters, now: 3),
            AppliedScope(set: Self.set, imposed: Self.imposed, parameters: Self.parameters, now: 3),
            AppliedScope(set: Self.set, imposed: nil, parameters: Self.parameters, now: 3),
            AppliedScope(set: nil, imposed: nil, parameters: Self.parameters, now: 3),
        ]
        for a in scopes {
            let recorded = AppliedScopes(initial: a, latest: scopes[0], previous: a)
            #expect(try AppliedScopes.decode(recorded.encoded) == recorded)
        }
        #expect(Set(scopes.map(\.token)).count == scopes.count, "each differs in its token")
        let other = try SubscriptionSet([Subscription(table: "items", filter: "zone = 'b'")])
        #expect(AppliedScope(set: nil, imposed: other, parameters: Self.parameters, now: 3).token != scopes[0].token)
        #expect(throws: StorageError.self) { try AppliedScopes.decode([4, 0, 0, 0]) }
    }
}
