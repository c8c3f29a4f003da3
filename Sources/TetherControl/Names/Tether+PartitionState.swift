extension Tether {
    /// A partition's state, as `tetherctl status` and `state` events report it (docs/contract.md: tetherctl).
    public enum PartitionState: ReportedName {
        case connecting
        case syncing
        case synced
        case offline
        case paused
        case resetPending
        case resetting
        case stopped
        case other(String)

        public static let known: [Self] = [.connecting, .syncing, .synced, .offline, .paused, .resetPending, .resetting, .stopped]

        public var rawValue: String {
            switch self {
            case .connecting: "connecting"
            case .syncing: "syncing"
            case .synced: "synced"
            case .offline: "offline"
            case .paused: "paused"
            case .resetPending: "reset-pending"
            case .resetting: "resetting"
            case .stopped: "stopped"
            case .other(let name): name
            }
        }
    }
}
