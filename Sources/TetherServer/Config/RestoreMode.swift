/// What a restore does with the window of history it drops (docs/client-reset.md, "Healing a
/// restored server"): `admin restore --heal|--rollback`, `restore-backup --heal|--rollback`,
/// `[history] devices_ahead`.
package enum RestoreMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// Devices that synced inside the window give it back during their resets.
    case heal
    /// The window stays lost (an operator undid it on purpose): devices reset as before.
    case rollback
}
