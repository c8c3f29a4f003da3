/// What an uploading session may write: the rows its subscriptions hold (``SubscriptionScope``)
/// and its grants' write rules (``WriteRules``). A change outside either is a compensating write.
package struct WriteScope: Sendable, Hashable {
    package var read: SubscriptionScope
    package var rules: WriteRules

    package init(read: SubscriptionScope, rules: WriteRules = .none) {
        self.read = read
        self.rules = rules
    }

    /// Every change allowed (a whole-partition session without write rules, healing).
    package static let whole = WriteScope(read: .whole)

    package var checksWrites: Bool { !read.isWhole || !rules.isEmpty }

    /// nil when the change is allowed; the subscriptions are weighed first.
    package func refusal(
        of kind: RowChange.Kind, table: String, key: RowKey, before: [String: FieldValue]?, after: [String: FieldValue]?
    ) -> CompensatingWrite? {
        read.refusal(of: kind, table: table, key: key, before: before, after: after)
            ?? rules.refusal(of: kind, table: table, key: key, before: before, after: after)
    }
}
