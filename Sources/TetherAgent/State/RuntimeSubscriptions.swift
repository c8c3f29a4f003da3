import TetherProtocol

/// The subscriptions a partition wants that were set at run time (`tetherctl subscriptions P
/// set`, `TetherClient.updateSubscriptions`), kept in the state database so that they outlive a
/// restart, with the digest of the configured set in force when they were made.
///
/// The precedence rule (docs/subscriptions.md "Changing them at run time"): a set made at run
/// time wins over the configuration until it is cleared, or until the configured set of its
/// partition changes (at a reload or a start): then the configuration wins again and the set
/// made at run time is forgotten.
package struct RuntimeSubscriptions: Sendable, Hashable {
    package var set: SubscriptionSet
    /// ``SubscriptionSet/digestText(of:)`` of the configured set when this was made.
    package var configuredDigest: String
    /// Seconds since 1970.
    package var madeAt: Double

    package init(set: SubscriptionSet, configured: SubscriptionSet?, madeAt: Double) {
        self.set = set
        self.configuredDigest = SubscriptionSet.digestText(of: configured)
        self.madeAt = madeAt
    }

    package init(set: SubscriptionSet, configuredDigest: String, madeAt: Double) {
        self.set = set
        self.configuredDigest = configuredDigest
        self.madeAt = madeAt
    }

    /// What a partition configured with `configured` wants, given the set made at run time.
    package enum InForce: Sendable, Hashable {
        /// No set made at run time: the configured one.
        case configured
        /// The set made at run time.
        case runtime(SubscriptionSet)
        /// The configured set changed since the set made at run time was made: the
        /// configured one, and the other is to be forgotten.
        case outdated(RuntimeSubscriptions)
    }

    /// The precedence rule, for a partition configured with `configured`.
    package static func inForce(configured: SubscriptionSet?, runtime: RuntimeSubscriptions?) -> InForce {
        guard let runtime else { return .configured }
        guard runtime.configuredDigest == SubscriptionSet.digestText(of: configured) else { return .outdated(runtime) }
        return .runtime(runtime.set)
    }
}

extension RuntimeSubscriptions.InForce {
    /// The set the partition wants (nil: the whole partition).
    package func wanted(configured: SubscriptionSet?) -> SubscriptionSet? {
        if case .runtime(let set) = self { return set }
        return configured
    }
}
