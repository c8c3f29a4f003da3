import TetherTOML

/// `[devices]` of `tether-server.toml` (docs/server.md, "Device ledger"): when a device counts
/// as stale or wedged in the metrics, how many ledger entries are kept, and how many device
/// ids one user may hold.
package struct DeviceLedgerSettings: Sendable, Hashable {
    /// `stale_after_seconds`: a device whose last report is older counts in
    /// `tether_server_devices_stale` (default one day).
    package var staleAfterSeconds = 86_400
    /// `wedged_after_seconds`: an entry whose unsynced changes have waited longer, with no
    /// upload acknowledged meanwhile, counts in `tether_server_devices_wedged` (default 15 min).
    package var wedgedAfterSeconds = 900
    /// `max_entries`: ledger entries (user, device and partition) kept at most; when the ledger
    /// holds this many, reports adding new entries are refused (default 100,000).
    package var maxEntries = 100_000
    /// `max_devices_per_user`: device ids one user may hold in the ledger; a report of one
    /// more is refused (default 1,000, at most `max_entries`).
    package var maxDevicesPerUser = Self.defaultMaxDevicesPerUser

    /// `credential_max_age_days`: an enrolled device whose credential is older is handed a new
    /// one at its next bind or report, as `admin device rotate` would (docs/server.md
    /// "Rotation"); nil (the default): credentials do not age.
    package var credentialMaxAgeDays: Int?

    /// ``credentialMaxAgeDays`` as a duration.
    package var credentialMaxAge: Duration? { credentialMaxAgeDays.map { .seconds($0 * 86_400) } }

    /// `action_expire_after_seconds`: a remote action not answered this long after it was asked
    /// expires (docs/server.md, "Remote actions"; default one day).
    package var actionExpireAfterSeconds = 86_400
    /// `max_devices_per_action`: the devices one action request may take (a selection of more is
    /// refused whole; default 10,000).
    package var maxDevicesPerAction = 10_000
    /// Actions one device may have pending; one more is refused (not configurable).
    package static let maxPendingActionsPerDevice = 32

    static let defaultMaxDevicesPerUser = 1_000

    package init() {}

    /// Reads `[devices]`; absent keys keep their defaults.
    static func parse(_ table: ConfigTable?) -> DeviceLedgerSettings {
        var settings = DeviceLedgerSettings()
        guard let table else { return settings }
        if let value = table.integer("stale_after_seconds", range: 60...31_536_000) { settings.staleAfterSeconds = value }
        if let value = table.integer("wedged_after_seconds", range: 10...31_536_000) { settings.wedgedAfterSeconds = value }
        if let value = table.integer("max_entries", range: 1...100_000_000) { settings.maxEntries = value }
        if let value = table.integer("credential_max_age_days", range: 1...3650) { settings.credentialMaxAgeDays = value }
        if let value = table.integer("action_expire_after_seconds", range: 10...2_592_000) { settings.actionExpireAfterSeconds = value }
        if let value = table.integer("max_devices_per_action", range: 1...1_000_000) { settings.maxDevicesPerAction = value }
        if let value = table.integer("max_devices_per_user", range: 1...100_000_000) {
            if value > settings.maxEntries {
                table.problem("max_devices_per_user", "\(value) is more than max_entries (\(settings.maxEntries))")
            } else {
                settings.maxDevicesPerUser = value
            }
        } else {
            settings.maxDevicesPerUser = min(Self.defaultMaxDevicesPerUser, settings.maxEntries)
        }
        return settings
    }

}
