extension Tether {
    /// Where a client reset is (`reset-phase` events, `tetherctl resets`; docs/contract.md: Reset steps).
    public enum ResetPhase: ReportedName {
        case recorded
        case manualHook
        /// Waits for an operator: `reset initiate` carries it out.
        case manualPending
        case backingUp
        case beforeHook
        case fetching
        case healing
        case rewriting
        case afterHook
        case done
        case quarantining
        case other(String)

        public static let known: [Self] = [
            .recorded, .manualHook, .manualPending, .backingUp, .beforeHook, .fetching, .healing, .rewriting, .afterHook, .done,
            .quarantining,
        ]

        public var rawValue: String {
            switch self {
            case .recorded: "recorded"
            case .manualHook: "manual-hook"
            case .manualPending: "manual-pending"
            case .backingUp: "backing-up"
            case .beforeHook: "before-hook"
            case .fetching: "fetching"
            case .healing: "healing"
            case .rewriting: "rewriting"
            case .afterHook: "after-hook"
            case .done: "done"
            case .quarantining: "quarantining"
            case .other(let name): name
            }
        }

        /// Whether the reset's backup of the store exists in this phase: from the phase after
        /// `backing-up` on (a quarantine moves the store itself there).
        public var backupExists: Bool {
            switch self {
            case .beforeHook, .fetching, .healing, .rewriting, .afterHook, .done: true
            case .recorded, .manualHook, .manualPending, .backingUp, .quarantining, .other: false
            }
        }
    }
}
