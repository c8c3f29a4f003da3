/// Collapsing changes to their net effect (docs/sync-model.md, "Collapsing local changes").
extension RowChange {
    /// The net effect of applying `self` and then `next` to the same row:
    /// update+update → update (last value per field); insert+update → insert with the updated
    /// fields; insert+delete and update+delete → delete; delete+insert → insert;
    /// delete+update → delete (an update of a missing row is ignored);
    /// insert+insert and update+insert → insert, fields merged (the later ones win).
    package func followed(by next: RowChange) -> RowChange {
        precondition(table == next.table && key == next.key, "followed(by:) combines changes of one row")
        switch next.kind {
        case .delete:
            return next
        case .insert:
            var fields = kind == .delete ? [:] : self.fields
            fields.merge(next.fields) { $1 }
            return .insert(table, key, fields)
        case .update:
            if kind == .delete { return self }
            var fields = self.fields
            fields.merge(next.fields) { $1 }
            return RowChange(table: table, key: key, kind: kind, fields: fields)
        }
    }
}

extension Changeset {
    /// The same effect with at most one change per row: each row's changes folded with
    /// `RowChange.followed(by:)`, placed where the row first appears. Changes of different
    /// rows commute, so the result applies to any state exactly as the original does.
    package func collapsed() -> Changeset {
        struct RowID: Hashable { var table: String; var key: RowKey }
        var result: [RowChange] = []
        var index: [RowID: Int] = [:]
        for change in changes {
            let id = RowID(table: change.table, key: change.key)
            if let i = index[id] {
                result[i] = result[i].followed(by: change)
            } else {
                index[id] = result.count
                result.append(change)
            }
        }
        return Changeset(result)
    }
}
