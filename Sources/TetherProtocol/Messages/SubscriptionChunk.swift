/// Part of the change a store makes when its subscriptions change (server → client, protocol
/// 9): rows that now match, as whole-row inserts, and rows that no longer do, as deletes that
/// only remove the store's copy. Computed at ``serverVersion``, the version the store is at
/// when the chunk comes (the server first catches the store up under its old subscriptions);
/// the store's version does not move. The last chunk makes the new set the store's own: the
/// store records it in the same transaction, so a chunk applied twice or a change cut short is
/// completed by the next bind.
package struct SubscriptionChunk: Sendable, Hashable {
    package var session: SessionID
    package var serverVersion: ServerVersion
    /// ``SubscriptionSet/digest`` of the set the store holds once the last chunk is applied.
    package var setDigest: UInt64
    /// What the store records with the set on the last chunk and names in its binds
    /// (``SubscriptionRequest/heldToken``): the server's name for the set as it resolved it for
    /// the store (the device's tags, the time), opaque to the device.
    package var scopeToken: UInt64
    package var isLast: Bool
    /// Whole-row inserts and deletes only.
    package var changes: ChangeRows

    package init(
        session: SessionID, serverVersion: ServerVersion, setDigest: UInt64, scopeToken: UInt64 = 0, isLast: Bool, changes: ChangeRows
    ) {
        self.scopeToken = scopeToken
        self.session = session
        self.serverVersion = serverVersion
        self.setDigest = setDigest
        self.isLast = isLast
        self.changes = changes
    }
}
