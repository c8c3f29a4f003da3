/// What one connection logs of the ledger entries its reports had refused
/// (``DeviceLedgerIntake``): the first refusal at once, with the user and the counts by reason
/// (never the partitions or states a device named), the rest folded into one line when the
/// connection closes, so a device sending thousands cannot flood the log. Pure.
struct ReportRefusalLog: Sendable {
    private(set) var logged = false
    /// Refused since the first line, by reason.
    private(set) var folded: [DeviceLedgerIntake.Refusal: Int] = [:]

    /// Notes a report's refusals; returns the line to log now, if any.
    mutating func refused(_ counts: [DeviceLedgerIntake.Refusal: Int], user: String) -> String? {
        let counts = counts.filter { $0.value > 0 }
        guard !counts.isEmpty else { return nil }
        guard logged else {
            logged = true
            return "device report entries not kept in the ledger (user \(user): \(Self.describe(counts))); more on this connection are counted and logged when it closes"
        }
        for (reason, count) in counts { folded[reason, default: 0] += count }
        return nil
    }

    /// The line to log when the connection closes, if later reports had entries refused too.
    func closing(user: String?) -> String? {
        guard !folded.isEmpty else { return nil }
        return "device report entries not kept in the ledger since the first refusal on this connection (user \(user ?? "-"): \(Self.describe(folded)))"
    }

    /// `3 not_granted, 1 full`, in the reasons' order.
    static func describe(_ counts: [DeviceLedgerIntake.Refusal: Int]) -> String {
        counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key.rawValue)" }.joined(separator: ", ")
    }
}
