import Foundation
import Testing
import TetherProtocol
import TetherStore
import TetherTestSupport
@testable import TetherAgent

/// What a bind says of subscriptions (protocol 9): the set the store holds, the set wanted, and
/// no ready file for a filtered bootstrap.
@Suite struct BindRequestBuilderTests {
    static let shop = try! SubscriptionSet([Subscription(table: "orders", filter: "customer = 'ann'")])
    static let everything = try! SubscriptionSet([Subscription(table: "orders")])

    private static func builder(_ fixture: ResetFixture, wanting wanted: SubscriptionSet?) throws -> BindRequestBuilder {
        var settings = fixture.context.partition
        settings.subscriptions = wanted
        return BindRequestBuilder(settings: settings, context: try ScriptedAgent(fixture), log: fixture.log.logger)
    }

    private static func request(_ builder: BindRequestBuilder, store: PartitionStore?) async throws -> BindRequest {
        guard case .request(let request, _) = await builder.request(for: store, token: "t0ken") else {
            throw TestSupportError("no bind request")
        }
        return request
    }

    @Test func aPartitionWithoutSubscriptionsAsksForTheWholePartition() async throws {
        let fixture = try await ResetFixture(synced: [])
        let known = try await Self.request(try Self.builder(fixture, wanting: nil), store: fixture.store)
        #expect(known.subscriptions == .whole)
        #expect(known.readyFile == nil, "a known store takes no state")
        let new = try await Self.request(try Self.builder(fixture, wanting: nil), store: nil)
        #expect(new.subscriptions == .whole)
        #expect(new.readyFile != nil, "a new store may take a ready file")
    }

    @Test func aBoundStoreSendsTheSetItHoldsAndTheSetWanted() async throws {
        let fixture = try await ResetFixture(synced: [])
        let builder = try Self.builder(fixture, wanting: Self.shop)
        // A store that records no set holds the whole partition.
        #expect(try await Self.request(builder, store: fixture.store).subscriptions == SubscriptionRequest(held: nil, wanted: Self.shop))
        try await fixture.store.recordSubscriptions(Self.everything)
        #expect(try await Self.request(builder, store: fixture.store).subscriptions == SubscriptionRequest(held: Self.everything, wanted: Self.shop))
        // Back to the whole partition: wanted nil, held the recorded set.
        let whole = try await Self.request(try Self.builder(fixture, wanting: nil), store: fixture.store)
        #expect(whole.subscriptions == SubscriptionRequest(held: Self.everything, wanted: nil))
    }

    @Test func aNewStoreWithSubscriptionsHoldsNothingAndTakesNoReadyFile() async throws {
        let fixture = try await ResetFixture(synced: [])
        let request = try await Self.request(try Self.builder(fixture, wanting: Self.shop), store: nil)
        #expect(request.identity == nil)
        #expect(request.subscriptions == SubscriptionRequest(held: nil, wanted: Self.shop))
        #expect(request.readyFile == nil, "ready files are the whole partition")
    }

    @Test func aWholePartitionStoreSendsTheTokenOfTheChangeItTook() async throws {
        let fixture = try await ResetFixture(synced: [])
        // A change the grants' subscriptions caused: the store's own set stays the whole partition.
        let chunk = SubscriptionChunk(
            session: 1, serverVersion: try await fixture.store.metadata().serverVersion, setDigest: 0, scopeToken: 77, isLast: true,
            changes: ChangeRows(Changeset([])))
        try await fixture.store.applySubscriptionChunk(chunk, finalSet: nil)
        let request = try await Self.request(try Self.builder(fixture, wanting: nil), store: fixture.store)
        #expect(request.subscriptions == SubscriptionRequest(held: nil, heldToken: 77, wanted: nil))
        let new = try await Self.request(try Self.builder(fixture, wanting: nil), store: nil)
        #expect(new.subscriptions == .whole, "a new store names no token")
    }
}
