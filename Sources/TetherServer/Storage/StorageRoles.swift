/// The storage by role, as the server's services hold it: ``SyncService`` keeps it and uses the
/// roles a bind, an upload, a heal chunk and a device report need, and gives it to
/// ``ServerControl`` (admin, heal, housekeeping, policy, ledger), ``SessionStreamer`` and
/// ``ReadyFileBuilder`` (history reading). ``init(_:)`` gives every role to one storage (the
/// app's wiring); a test replaces one role with a double of that role.
public struct StorageRoles: Sendable {
    public var policy: any PolicyStorage
    public var history: any HistoryReading
    public var integration: any IntegrationStorage
    public var heal: any HealStorage
    public var admin: any AdminStorage
    public var housekeeping: any HousekeepingStorage
    public var ledger: any DeviceLedgerStorage

    /// Every role played by `storage`.
    public init(_ storage: any ServerStorage) {
        policy = storage
        history = storage
        integration = storage
        heal = storage
        admin = storage
        housekeeping = storage
        ledger = storage
    }
}
