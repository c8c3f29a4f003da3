/// Versions of this build: the release and the sync protocol it speaks.
package enum TetherVersion {
    /// The release, printed by every program's `--version`: the file `VERSION` says it, and
    /// `TetherVersionTests` checks that this is the same.
    package static let release = "0.1.0"
    /// The sync protocol version an agent announces in its hello.
    package static let syncProtocol = 9
    /// The first protocol version with flow control (`credit`, docs/protocol.md).
    package static let flowControl = 2
    /// The first protocol version whose binds carry the store's lineage (``StoreLineage``): the
    /// server detects stores restored from older copies or copied to another device.
    package static let storeLineage = 3
    /// The first protocol version with healing (`heal` and `healed`, docs/protocol.md): a
    /// device gives back what a server restore lost.
    package static let healing = 4
    /// The first protocol version with ready files (``ReadyFileRequest``, ``StateFileSlice``): a
    /// new store or a reset takes the partition's state as a store file the server built once.
    package static let readyFiles = 5
    /// The first protocol version with device reports (``DeviceReport``): the server keeps a
    /// ledger of its devices and what each says of its partitions.
    package static let deviceReports = 6
    /// The first protocol version with credential rotation (`credential` and
    /// `credential-accepted`, docs/protocol.md): an enrolled device is handed a new credential
    /// over its sync connection and says when it has written it.
    package static let credentialRotation = 7
    /// The first protocol version with remote actions (`action` and `action-result`,
    /// docs/protocol.md): the server asks a device to initiate a pending reset, retry now,
    /// pause or resume a partition, or send a diagnostics report, and the device answers; its
    /// reports say which actions it accepts.
    package static let remoteActions = 8
    /// The first protocol version with subscriptions (``SubscriptionRequest``,
    /// ``SubscriptionChunk``, ``CompensatingWrites``, docs/subscriptions.md): a store holds the
    /// rows its subscriptions match, and a write outside them is reverted, not integrated.
    package static let subscriptions = 9

    /// The protocol versions a server speaking `server` accepts: its own and the one before it,
    /// so that a fleet upgrades in stages, the server first (docs/contract.md: Versions and
    /// compatibility). Any other version gets 105.
    package static func acceptedByServer(speaking server: Int = syncProtocol) -> ClosedRange<Int> {
        (server - 1)...server
    }
}
