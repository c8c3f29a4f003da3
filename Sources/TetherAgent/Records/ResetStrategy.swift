/// What the reset does to the store when it gets to rewrite it.
package enum ResetStrategy: String, Sendable, Hashable, Codable {
    /// Server state plus unsynced changes replayed by the recovery rules (docs/contract.md: Recovery rules).
    case recover
    /// Server state; unsynced changes stay only in the backup.
    case discard
    /// Manual reset: waits for an operator, then discards (unsynced changes stay in the backup).
    case manual
    /// Permission denied: waits like a manual reset, then empties the store.
    case deleteStore = "delete-store"
}
