/// The storage by role, as the server's services hold it: ``SyncService`` keeps it and uses the
/// roles a bind, an upload, a heal chunk and a device report need, and gives it to
/// ``ServerControl`` (admin, heal, housekeeping, policy, ledger, identities), ``SessionStreamer`` and
/// ``ReadyFileBuilder`` (history reading); enrollment and device credentials use
/// ``identity``. ``init(_:)`` gives every role to one storage (the
/// app's wiring); a test replaces one role with a double of that role.
package struct StorageRoles: Sendable {
    package var policy: any PolicyStorage
    package var history: any HistoryReading
    package var integration: any IntegrationStorage
    package var heal: any HealStorage
    package var admin: any AdminStorage
    package var housekeeping: any HousekeepingStorage
    package var ledger: any DeviceLedgerStorage
    package var identity: any IdentityStorage
    /// Remote actions: queued by ``ServerControl``, delivered and answered through ``SyncService``.
    package var actions: any DeviceActionStorage

    /// Every role played by `storage`.
    package init(_ storage: any ServerStorage) {
        policy = storage
        history = storage
        integration = storage
        heal = storage
        admin = storage
        housekeeping = storage
        ledger = storage
        identity = storage
        actions = storage
    }
}
