/// A partition's state as `tetherctl status` shows it (docs/contract.md: tetherctl).
package enum PartitionState: String, Sendable, Hashable, Codable, CaseIterable {
    case connecting
    case syncing
    case synced
    case offline
    case paused
    case resetPending = "reset-pending"
    case resetting
    case stopped
}
