/// Client reset modes of docs/contract.md "Reset modes".
package enum ResetMode: String, Sendable, Hashable, Codable, CaseIterable {
    case recoverUnsyncedChanges = "recover_unsynced_changes"
    case recoverOrDiscardUnsyncedChanges = "recover_or_discard_unsynced_changes"
    case discardUnsyncedChanges = "discard_unsynced_changes"
    case manual
}
