/// A history entry as one session receives it, and an upload's changes as the server checks
/// them: rows held before and after each change decide.
extension SubscriptionScope {
    /// A filtered session's history needs each entry's row images; an entry written before the
    /// server kept them cannot be filtered.
    package struct MissingImages: Error, Sendable, Hashable {}

    /// `changes` as this scope's session receives them, by the rows before and after each change
    /// (`images`, one per change): a change to a row held before and after goes as it is; a row
    /// that starts being held arrives as an insert of the whole row; one that stops being held
    /// leaves the store as a delete (the row is not deleted on the server); the rest not at all.
    /// The whole partition and whole tables need no images.
    package func filtered(_ changes: Changeset, images: RowImages?) throws -> Changeset {
        guard let tables else { return changes }
        var kept: [RowChange] = []
        kept.reserveCapacity(changes.count)
        for (index, change) in changes.changes.enumerated() {
            switch tables[change.table] {
            case nil:
                continue
            case .wholeTable?:
                kept.append(change)
            case .filtered?:
                guard let images, index < images.images.count else { throw MissingImages() }
                let image = images.images[index]
                let before = try image.before.map { try FieldValue.decodeFields($0) }
                let after: [String: FieldValue]? =
                    switch image.after {
                    case .absent: nil
                    case .stored(let bytes): try FieldValue.decodeFields(bytes)
                    case .changeFields: change.fields
                    }
                let heldBefore = before.map { holds(change.table, key: change.key, $0) } ?? false
                let heldAfter = after.map { holds(change.table, key: change.key, $0) } ?? false
                switch (heldBefore, heldAfter) {
                case (true, true): kept.append(change)
                case (false, true): kept.append(.insert(change.table, change.key, after ?? [:]))
                case (true, false): kept.append(.delete(change.table, change.key))
                case (false, false): continue
                }
            }
        }
        return Changeset(kept)
    }

    /// Whether a device holding this scope may make a change that turns the stored row
    /// `before` into `after` (nil: absent): the row must be held before (or not exist) and after
    /// (or be removed). nil when it may; otherwise the compensating write's reason and message.
    package func refusal(of change: RowChange.Kind, table: String, key: RowKey, before: [String: FieldValue]?, after: [String: FieldValue]?)
        -> CompensatingWrite?
    {
        guard let tables else { return nil }
        guard tables[table] != nil else {
            return CompensatingWrite(
                table: table, key: key, reason: .outsideSubscriptions,
                message: "the partition's subscriptions do not include table \(table)")
        }
        if let before, !holds(table, key: key, before) {
            return CompensatingWrite(
                table: table, key: key, reason: .outsideSubscriptions,
                message: "the \(change.rawValue) is to a row of \(table) outside the partition's subscriptions")
        }
        if let after, !holds(table, key: key, after) {
            return CompensatingWrite(
                table: table, key: key, reason: .outsideSubscriptions,
                message: "the \(change.rawValue) would leave a row of \(table) outside the partition's subscriptions")
        }
        return nil
    }
}
