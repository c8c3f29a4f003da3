import TetherProtocol
import TetherTOML

extension PartitionSettings {
    /// The `[[partition.subscription]]` entries of one `[[partition]]`: each a `table` (a legal
    /// identifier) and an optional `where` whose syntax is checked here; the columns are checked
    /// against the store's schema by `tetherd --check-config` and by the server at bind. Nil when
    /// the partition lists none (the whole partition).
    static func parseSubscriptions(_ partition: ConfigTable) -> SubscriptionSet? {
        let tables = partition.tables("subscription")
        if tables.isEmpty {
            if partition.has("subscription") {
                partition.problem("subscription", "an empty list of subscriptions would hold no rows; leave it out to sync the whole partition")
            }
            return nil
        }
        var subscriptions: [Subscription] = []
        var valid = true
        for table in tables {
            let name = table.string("table", required: true)
            let filter = table.string("where")
            guard let name else { valid = false; continue }
            if let reason = Schema.identifierProblem(name) {
                table.problem("table", "\(reason): not a table name")
                valid = false
                continue
            }
            let subscription = Subscription(table: name, filter: filter)
            do {
                try subscription.checkSyntax()
            } catch {
                // The error's description names the byte of the filter it is at.
                table.problem("where", "the filter of the subscription to \(name) is not valid: \(error)")
                valid = false
                continue
            }
            subscriptions.append(subscription)
        }
        do {
            let set = try SubscriptionSet(subscriptions)
            return valid ? set : nil
        } catch {
            partition.problem("subscription", "\(error) (subscriptions.md)")
            return nil
        }
    }
}
