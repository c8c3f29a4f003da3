extension Tether {
    /// How a client reset ended (`reset-outcome` events, `tetherctl resets`; docs/contract.md: tetherctl).
    public enum ResetOutcome: ReportedName {
        case inProgress
        case recovered
        case discarded
        /// Waits for an operator.
        case manualPending
        case manualDone
        case deleted
        /// Never carried out: the record was stale (docs/client-reset.md).
        case superseded
        case other(String)

        public static let known: [Self] = [.inProgress, .recovered, .discarded, .manualPending, .manualDone, .deleted, .superseded]

        public var rawValue: String {
            switch self {
            case .inProgress: "in-progress"
            case .recovered: "recovered"
            case .discarded: "discarded"
            case .manualPending: "manual-pending"
            case .manualDone: "manual-done"
            case .deleted: "deleted"
            case .superseded: "superseded"
            case .other(let name): name
            }
        }
    }
}
