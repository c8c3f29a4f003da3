public import TetherProtocol

/// How the server applies one change to its materialised state (docs/sync-model.md,
/// "Server order decides"). Pure: storage backends read the row, call this, write the result.
public enum ServerOrderRules {
    public enum Outcome: Sendable, Hashable {
        case put([String: FieldValue])
        case delete
        case unchanged
    }

    /// - insert: upsert; on an existing key every field it carries is set (merge).
    /// - update: sets the fields it carries if the row exists; ignored if it is gone.
    /// - delete: removes the row if present.
    public static func apply(_ change: RowChange, to existing: [String: FieldValue]?) -> Outcome {
        switch change.kind {
        case .insert:
            return .put((existing ?? [:]).merging(change.fields) { _, new in new })
        case .update:
            guard let existing else { return .unchanged }
            return .put(existing.merging(change.fields) { _, new in new })
        case .delete:
            return existing == nil ? .unchanged : .delete
        }
    }
}
