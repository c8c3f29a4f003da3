import TetherProtocol

extension PartitionController {
    /// Two copies of one store whose histories still agree (neither uploaded since the copy)
    /// cannot be told apart by the server: the second gets 108 for as long as the first stays
    /// bound. A dead connection of this same device is gone within the server's ping timeout
    /// (30 s pings), so binds that keep meeting 108 for ``FaultInjection/boundElsewhereLimit``
    /// (10 minutes) mean another live device holds the identity: the store takes a new one by
    /// a client reset with cause `store-cloned`, keeping its unsynced changes in the recover
    /// modes (docs/client-reset.md, "Restored and cloned devices"). nil: go on with `error`.
    func identityTakenElsewhere(_ error: SyncError) -> SyncError? {
        guard error.code == .clientFileBoundInOtherSession else { return nil }
        let since = boundElsewhereSince ?? .now
        boundElsewhereSince = since
        let held = ContinuousClock.now - since
        guard held >= FaultInjection.boundElsewhereLimit else { return nil }
        boundElsewhereSince = nil
        return SyncError(
            .badClientVersion,
            "\(LineageCause.cloned.prefix): the store's identity has been bound in another session for \(held.components.seconds) s: another device syncs a copy of this store under it",
            action: .clientReset,
            hint: "the store takes a new identity by a client reset, keeping its unsynced changes in the recover modes; check for cloned devices (docs/client-reset.md)")
    }
}
