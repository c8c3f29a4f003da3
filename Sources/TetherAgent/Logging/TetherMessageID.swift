/// Fixed journald `MESSAGE_ID`s (docs/contract.md: Logging), explained in `systemd/catalog/tether.catalog`
/// (`journalctl -x`). Never change a value: operators' alerts match on them.
package enum TetherMessageID: String, Sendable, CaseIterable {
    case resetStarted = "54dcdb0ebb1944ed837c0bce895b7de2"
    case resetCompleted = "b5fa6f03165345cf8e501cf99327e6b2"
    case resetFellBackToManual = "0321d8b6b17c47f08a85bff27db91f6e"
    case hookFailed = "1f1c1209130f4c7887f06ddf51ac4ac4"
    case permissionDenied = "cda3732e7dee4b3ab5ba34d6f525e098"
    case protocolMismatch = "8ebb81f8e5844aad8381835bd8783e29"
    case storeQuarantined = "6a3f0e2c9b7d4f1e8c5a2d7b4e9f1c03"
    case resetLoop = "3e090fc69cfd425c862b1a6ecc622fbe"
    /// A store went back in time or is synced from two places (209/210), or the agent forgot
    /// its stores' identities because the machine id changed.
    case storeLineage = "9b1f4c2e7a5d4c83b06e2f8d1a7c5e49"

    /// The logger metadata key the journald handler turns into `MESSAGE_ID`.
    package static let metadataKey = "message_id"
}
