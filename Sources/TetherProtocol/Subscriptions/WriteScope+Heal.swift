/// A heal view from a device with subscriptions or write rules (docs/client-reset.md "Healing a
/// restored server"): it vouches only for the rows its scope holds and lets it write.
extension WriteScope {
    /// A view's `rows` (whole-row inserts for rows it holds, deletes for rows it does not) as this
    /// scope may vouch for them: a row it may not hold or write is left out (the view says
    /// nothing of it), and a delete becomes an unknown key — a store holding only its
    /// subscriptions cannot tell a row deleted from one that left them.
    package func vouched(_ rows: Changeset) -> (rows: Changeset, unknown: Changeset) {
        guard checksWrites else { return (rows, Changeset()) }
        var kept: [RowChange] = []
        var unknown: [RowChange] = []
        for change in rows.changes {
            switch change.kind {
            case .delete:
                unknown.append(change)
            case .insert, .update:
                guard read.holds(change.table, key: change.key, change.fields),
                    rules.refusal(of: .insert, table: change.table, key: change.key, before: nil, after: change.fields) == nil
                else { continue }
                kept.append(change)
            }
        }
        return (Changeset(kept), Changeset(unknown))
    }
}
