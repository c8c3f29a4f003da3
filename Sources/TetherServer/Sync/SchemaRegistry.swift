import TetherProtocol

/// The schemas the server has used, newest last, and the rules derived from them: which
/// store schema versions may still sync (235) and which uploads fit the schema (225).
package struct SchemaRegistry: Sendable, Hashable {
    package private(set) var history: [SchemaRecord]

    package init(history: [SchemaRecord]) {
        precondition(!history.isEmpty, "a schema registry needs at least one schema")
        self.history = history.sorted { $0.version < $1.version }
    }

    package var current: Schema { history[history.count - 1].schema }

    package mutating func append(_ record: SchemaRecord) { history.append(record) }

    /// Why a store made with `schemaVersion` can no longer sync (235), or nil when it can.
    /// Version 0 is a new store. Non-breaking changes since the store's version are fine:
    /// the bind reply carries the new schema.
    package func problem(storeSchemaVersion version: Int) -> SyncError? {
        if version == 0 { return nil }
        let newest = current.version
        if version > newest {
            return SyncError(
                .badSchemaVersion,
                "the store has schema version \(version) but the server's newest is \(newest) (was the server restored?)")
        }
        guard history.contains(where: { $0.version == version }) else {
            return SyncError(.badSchemaVersion, "the store's schema version \(version) is unknown to the server")
        }
        if let breaking = history.first(where: { $0.version > version && $0.isBreaking }) {
            return SyncError(
                .badSchemaVersion,
                "schema version \(breaking.version) changed the schema in a breaking way since the store's version \(version)")
        }
        return nil
    }

    /// What applying `schema` would do: the differences, whether they break stores, and
    /// any reason it cannot be applied at all.
    package func plan(_ schema: Schema) -> SchemaPlan {
        var refusal: String? = nil
        let problems = schema.problems()
        if !problems.isEmpty {
            refusal = "the schema is not valid: " + problems.joined(separator: "; ")
        } else if schema.version <= current.version {
            refusal = "schema version \(schema.version) is not newer than the current version \(current.version)"
        }
        return SchemaPlan(schema: schema, diff: SchemaDiff(from: current, to: schema), refusal: refusal)
    }

    /// Why an upload does not fit the current schema (225), or nil when it does: the rules
    /// every agent applies downloads with (``SchemaFit``), so nothing accepted here is refused
    /// there (an insert without a value for a non-nullable column, say).
    /// The changes are checked where they are in the received message (``SchemaFit/check(_:in:)``).
    package func problem(upload changes: ChangeRows) -> SyncError? {
        do {
            try SchemaFit.check(changes, in: current)
            return nil
        } catch {
            return invalid("\(error) (schema version \(current.version))")
        }
    }

    /// ``problem(upload:)-(ChangeRows)`` of a changeset's changes (tests, tools).
    package func problem(upload changeset: Changeset) -> SyncError? { problem(upload: ChangeRows(changeset)) }

    private func invalid(_ message: String) -> SyncError {
        SyncError(.invalidSchemaChange, "upload does not fit the server's schema: \(message)")
    }
}

/// The outcome of checking a new schema (`admin schema apply`).
package struct SchemaPlan: Sendable, Hashable {
    package var schema: Schema
    package var diff: SchemaDiff
    /// Why it cannot be applied, whatever the flags.
    package var refusal: String?

    package var isBreaking: Bool { diff.isBreaking }
}
