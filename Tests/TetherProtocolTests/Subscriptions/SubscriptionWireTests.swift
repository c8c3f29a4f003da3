import Testing
import TetherProtocol

/// Protocol 9 on the wire: a bind's subscriptions, `8d` compensating-writes and `8e`
/// subscription-chunk round-trip, and what breaks their rules is refused.
@Suite struct SubscriptionWireTests {
    static let lineage = StoreLineage(uploadSalt: 7, integratedSeq: 0, lastSeq: 0, sent: [])

    static func set(_ filters: String?...) throws -> SubscriptionSet {
        try SubscriptionSet(filters.map { Subscription(table: "items", filter: $0) })
    }

    static func bind(_ subscriptions: SubscriptionRequest?, readyFile: ReadyFileRequest? = nil) -> BindRequest {
        BindRequest(
            session: 1, partition: "p", token: "tok", identity: nil, lineage: lineage, readyFile: readyFile, subscriptions: subscriptions)
    }

    @Test func aBindCarriesTheSetsHeldAndWanted() throws {
        for request in [
            SubscriptionRequest.whole, SubscriptionRequest(held: nil, wanted: try Self.set("shop = 1", nil)),
            SubscriptionRequest(held: try Self.set("a = 'x'"), wanted: nil), SubscriptionRequest(held: .empty, wanted: try Self.set("b IS NULL")),
        ] {
            for ready in [nil, ReadyFileRequest.accept] {
                let message = ClientMessage.bind(Self.bind(request, readyFile: ready))
                #expect(try ClientMessage.decode(message.encoded()) == message)
            }
        }
        // Without subscriptions the bind is a protocol-8 one, as before.
        #expect(try ClientMessage.decode(ClientMessage.bind(Self.bind(nil)).encoded()) == .bind(Self.bind(nil)))
    }

    @Test func aSetIsSortedDeduplicatedAndBounded() throws {
        let set = try SubscriptionSet([Subscription(table: "b"), Subscription(table: "a", filter: "x = 1"), Subscription(table: "b")])
        #expect(set.subscriptions == [Subscription(table: "a", filter: "x = 1"), Subscription(table: "b")])
        #expect(set.digest == (try SubscriptionSet(set.subscriptions.reversed())).digest)
        #expect(set.digest != (try SubscriptionSet([Subscription(table: "a", filter: "x = 2"), Subscription(table: "b")])).digest)
        #expect(throws: SubscriptionSetError.self) {
            try SubscriptionSet((0...SubscriptionSetLimits.maxSubscriptions).map { Subscription(table: "t\($0)") })
        }
        // Over the wire too: a count past the limit, unknown flag bits.
        var w = ByteWriter()
        w.byte(2)
        w.varint(SubscriptionSetLimits.maxSubscriptions + 1)
        let prefix = ClientMessage.bind(Self.bind(nil, readyFile: .accept)).encoded()
        #expect(throws: WireDecodeError.self) { try ClientMessage.decode(prefix + w.bytes) }
        #expect(throws: WireDecodeError.self) { try ClientMessage.decode(prefix + [8]) }
    }

    @Test func compensatingWritesAndSubscriptionChunksRoundTrip() throws {
        let writes = ServerMessage.compensatingWrites(CompensatingWrites(
            session: 3, serverVersion: ServerVersion(version: 9, salt: 4),
            writes: [
                CompensatingWrite(table: "items", key: .integer(4), reason: .outsideSubscriptions, message: "outside"),
                CompensatingWrite(table: "items", key: .text("k"), reason: .readOnlyColumn, message: "price"),
            ]))
        #expect(try ServerMessage.decode(writes.encoded()) == writes)
        let chunk = ServerMessage.subscriptionChunk(SubscriptionChunk(
            session: 3, serverVersion: ServerVersion(version: 9, salt: 4), setDigest: 0xfedc_ba98_7654_3210, isLast: true,
            changes: ChangeRows(Changeset([.insert("items", .integer(1), ["a": .text("x")]), .delete("items", .integer(2))]))))
        #expect(try ServerMessage.decode(chunk.encoded()) == chunk)
        let update = ServerMessage.subscriptionChunk(SubscriptionChunk(
            session: 3, serverVersion: .none, setDigest: 1, isLast: false,
            changes: ChangeRows(Changeset([.update("items", .integer(1), ["a": .text("x")])]))))
        #expect(throws: WireDecodeError.self, "a row entering is whole") { try ServerMessage.decode(update.encoded()) }
        let record = CompensationRecord(
            writes: [CompensatingWrite(table: "items", key: .integer(4), reason: .writeRule, message: "rule")],
            reverts: Changeset([.delete("items", .integer(4))]))
        #expect(try CompensationRecord.decode(record.encoded) == record)
    }
}
