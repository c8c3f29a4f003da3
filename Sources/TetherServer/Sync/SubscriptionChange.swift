import TetherProtocol

/// A bound store whose rows are another scope's than the one its session wants: its downloads
/// catch it up under ``held``, then send the rows entering and leaving (``SubscriptionChunk``s,
/// the last naming ``digest``), then go on under the session's scope.
package struct SubscriptionChange: Sendable {
    package var held: SubscriptionScope
    /// ``SubscriptionSet/digest`` of the wanted set; 0 for the whole partition.
    package var digest: UInt64
    /// ``AppliedScope/token`` of the wanted scope, which the store records with the set and names
    /// in its next binds (0: the whole partition).
    package var token: UInt64

    package init(held: SubscriptionScope, digest: UInt64, token: UInt64 = 0) {
        self.held = held
        self.digest = digest
        self.token = token
    }
}
