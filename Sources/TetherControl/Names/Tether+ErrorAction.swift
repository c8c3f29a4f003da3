extension Tether {
    /// What the agent does about a sync error: the `action` of a `sync-error` event (docs/events.md).
    public enum ErrorAction: ReportedName {
        /// Reconnect (or bind again) with backoff.
        case retry
        /// Read the credentials again and reconnect.
        case reauth
        /// A client reset, recovering unsynced changes where the partition's mode allows.
        case clientReset
        /// A client reset; the server does not allow recovering unsynced changes.
        case clientResetNoRecovery
        /// Back the store up and empty it (access denied); waits for an operator.
        case deleteStore
        /// Syncing stops until the configuration is reloaded.
        case fatal
        /// A transport failure or an enrollment that failed: retried with backoff.
        case transient
        case other(String)

        public static let known: [Self] = [.retry, .reauth, .clientReset, .clientResetNoRecovery, .deleteStore, .fatal, .transient]

        public var rawValue: String {
            switch self {
            case .retry: "retry"
            case .reauth: "reauth"
            case .clientReset: "client_reset"
            case .clientResetNoRecovery: "client_reset_no_recovery"
            case .deleteStore: "delete_store"
            case .fatal: "fatal"
            case .transient: "transient"
            case .other(let name): name
            }
        }
    }
}
