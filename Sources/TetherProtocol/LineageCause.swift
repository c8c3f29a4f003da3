/// Why a store's lineage was refused or forgotten (docs/client-reset.md, "Restored and cloned
/// devices"): the first words of the error message of a 209 or 210, the `cause` of the reset
/// that follows, a label of the agent's metrics and a hook variable.
package enum LineageCause: String, Sendable, Hashable, Codable, CaseIterable {
    /// The store went back in time: restored from an older image or copy.
    case regressed = "store-regressed"
    /// Another place syncs under the store's identity: a cloned device or copied store.
    case cloned = "store-cloned"
    /// The machine id changed (a golden image's first boot): the agent forgot the identity
    /// before binding.
    case machineChanged = "machine-changed"

    /// How an error message names it.
    package var prefix: String {
        switch self {
        case .regressed: "store regressed"
        case .cloned: "store identity used by another device"
        case .machineChanged: "machine changed"
        }
    }

    /// The cause a sync error names: 209 and 210 name theirs in their first words.
    package init?(_ error: SyncError) {
        guard error.code == .badServerVersion || error.code == .badClientVersion else { return nil }
        self = error.message.hasPrefix(Self.cloned.prefix) ? .cloned : .regressed
    }
}
