import TetherProtocol

/// Two copies of one store whose histories still agree (neither uploaded since the copy)
/// cannot be told apart by the server: the second gets 108 for as long as the first stays
/// bound. A dead connection of this same device is gone within the server's ping timeout
/// (30 s pings), so binds that keep meeting 108 for ``FaultInjection/boundElsewhereLimit``
/// (10 minutes) mean another live device holds the identity: the store takes a new one by a
/// client reset with cause `store-cloned`, keeping its unsynced changes in the recover modes
/// (docs/client-reset.md, "Restored and cloned devices"). Spans binds: one per partition.
struct BoundElsewhereWatch: Sendable, Hashable {
    /// Since when every bind met 108, if the last did.
    private(set) var since: ContinuousClock.Instant?

    /// A bind succeeded: the identity is this store's again.
    mutating func bound() {
        since = nil
    }

    /// The reset-causing error `error` stands for when 108 has lasted too long; nil: go on with
    /// `error`.
    mutating func identityTakenElsewhere(_ error: SyncError, now: ContinuousClock.Instant = .now) -> SyncError? {
        guard error.code == .clientFileBoundInOtherSession else { return nil }
        let since = self.since ?? now
        self.since = since
        let held = now - since
        guard held >= FaultInjection.boundElsewhereLimit else { return nil }
        self.since = nil
        return SyncError(
            .badClientVersion,
            "\(LineageCause.cloned.prefix): the store's identity has been bound in another session for \(held.components.seconds) s: another device syncs a copy of this store under it",
            action: .clientReset,
            hint: "the store takes a new identity by a client reset, keeping its unsynced changes in the recover modes; check for cloned devices (docs/client-reset.md)")
    }
}
