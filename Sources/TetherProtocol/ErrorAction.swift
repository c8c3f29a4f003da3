/// What a device must do about a sync error. The server sends it with every error
/// (as Realm's sync protocol does), so an agent can follow codes it does not know.
package enum ErrorAction: String, Sendable, Hashable, Codable, CaseIterable {
    /// Reset the store, recovering unsynced changes where the mode allows.
    case clientReset = "client_reset"
    /// Reset the store; the server does not allow recovery of unsynced changes.
    case clientResetNoRecovery = "client_reset_no_recovery"
    /// Back the store up and empty it (permission denied, docs/contract.md "Manual resets and delete-store").
    case deleteStore = "delete_store"
    /// Re-read the credentials and reconnect.
    case reauth
    /// Transient: reconnect with capped exponential backoff.
    case retry
    /// Stop syncing the affected partition(s) until the configuration changes.
    case fatal

    /// True for the actions the client-reset machinery handles.
    package var needsReset: Bool {
        switch self {
        case .clientReset, .clientResetNoRecovery, .deleteStore: true
        case .reauth, .retry, .fatal: false
        }
    }

    /// True when reconnecting later may succeed without anyone changing anything.
    package var isTransient: Bool {
        switch self {
        case .retry, .reauth: true
        case .clientReset, .clientResetNoRecovery, .deleteStore, .fatal: false
        }
    }
}
