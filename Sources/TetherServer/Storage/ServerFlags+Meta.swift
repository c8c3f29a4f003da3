/// How both server storages keep ``ServerFlags``: one `meta` row per flag, 1 or 0, NULL (or no
/// row) for an unset optional flag.
extension ServerFlags {
    /// The flags' `meta` rows, in the order they are written.
    var metaRows: [(key: String, value: Int64?)] {
        [
            ("sync_terminated", Self.stored(syncTerminated)),
            ("recovery_override", recoveryOverride.map(Self.stored)),
            ("recovery_override_config", recoveryOverrideConfigValue.map(Self.stored)),
        ]
    }

    /// The flags the `meta` rows say (a missing row is an unset flag).
    init(meta: [String: Int64?]) {
        func flag(_ key: String) -> Bool? { (meta[key] ?? nil).map { $0 == 1 } }
        self.init(
            syncTerminated: flag("sync_terminated") ?? false, recoveryOverride: flag("recovery_override"),
            recoveryOverrideConfigValue: flag("recovery_override_config"))
    }

    private static func stored(_ value: Bool) -> Int64 { value ? 1 : 0 }
}
