/// What a bind says of subscriptions (protocol 9): the set the store holds and the set the
/// device wants (nil: the whole partition). A store bootstrapping holds nothing yet and takes
/// the state of `wanted`; a bound store whose `held` differs is caught up under `held` and then
/// changed to `wanted` by ``SubscriptionChunk``s, without a reset.
package struct SubscriptionRequest: Sendable, Hashable {
    package var held: SubscriptionSet?
    package var wanted: SubscriptionSet?

    package init(held: SubscriptionSet?, wanted: SubscriptionSet?) {
        self.held = held
        self.wanted = wanted
    }

    /// A device that wants and holds the whole partition (what an older agent's bind means).
    package static let whole = SubscriptionRequest(held: nil, wanted: nil)

    package var isWhole: Bool { held == nil && wanted == nil }
}
