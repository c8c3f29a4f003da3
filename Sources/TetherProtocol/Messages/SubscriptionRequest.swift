/// What a bind says of subscriptions (protocol 9): the set the store holds and the set the
/// device wants (nil: the whole partition). A store bootstrapping holds nothing yet and takes
/// the state of `wanted`; a bound store whose `held` differs is caught up under `held` and then
/// changed to `wanted` by ``SubscriptionChunk``s, without a reset.
package struct SubscriptionRequest: Sendable, Hashable {
    package var held: SubscriptionSet?
    /// The ``SubscriptionChunk/scopeToken`` of the change that gave the store its rows (0: the
    /// store took them with its state). The server resolved `held` (and the subscriptions its
    /// grants impose, even on a whole-partition store) for the store with the device's tags and
    /// the time of that change, and resolves them again with them.
    package var heldToken: UInt64
    package var wanted: SubscriptionSet?

    package init(held: SubscriptionSet?, heldToken: UInt64 = 0, wanted: SubscriptionSet?) {
        self.held = held
        self.heldToken = heldToken
        self.wanted = wanted
    }

    /// A device that wants and holds the whole partition (what an older agent's bind means).
    package static let whole = SubscriptionRequest(held: nil, wanted: nil)

    package var isWhole: Bool { held == nil && wanted == nil }
}
