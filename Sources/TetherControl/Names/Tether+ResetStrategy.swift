extension Tether {
    /// What a client reset does to the store (`tetherctl resets`, the `message` of a
    /// `reset-phase` event; docs/client-reset.md).
    public enum ResetStrategy: ReportedName {
        /// The server's state, and unsynced changes replayed by the recovery rules.
        case recover
        /// The server's state; unsynced changes stay only in the backup.
        case discard
        /// Waits for an operator (`tetherctl reset initiate`, ``TetherClient``'s `initiateReset`), then discards.
        case manual
        /// Access was denied: waits like a manual reset, then empties the store.
        case deleteStore
        case other(String)

        public static let known: [Self] = [.recover, .discard, .manual, .deleteStore]

        public var rawValue: String {
            switch self {
            case .recover: "recover"
            case .discard: "discard"
            case .manual: "manual"
            case .deleteStore: "delete-store"
            case .other(let name): name
            }
        }
    }
}
