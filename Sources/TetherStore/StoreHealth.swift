/// What the agent knows about a store's soundness: what opening found, and the
/// `PRAGMA schema_version` the running schema check last verified.
struct StoreHealth: Sendable {
    var schemaVersion = 0
    /// Set when the store was opened with `tolerateAlteredTables` and its tables differ.
    var alteration: StoreError?
    /// Capture triggers an application had dropped or changed, recreated at open.
    var triggersRecreatedAtOpen: [String] = []
}
