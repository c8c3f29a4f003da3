/// Client reset modes of SPEC §4.1.
public enum ResetMode: String, Sendable, Hashable, Codable, CaseIterable {
    case recoverUnsyncedChanges = "recover_unsynced_changes"
    case recoverOrDiscardUnsyncedChanges = "recover_or_discard_unsynced_changes"
    case discardUnsyncedChanges = "discard_unsynced_changes"
    case manual
}
