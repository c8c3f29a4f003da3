/// The outcome of ``PartitionStore/checkSchema()``.
package enum StoreSchemaCheck: Sendable, Hashable {
    /// `PRAGMA schema_version` did not move since the last check.
    case unchanged
    /// The schema changed (the agent's own upgrade, or an application's harmless change such as
    /// an index) and the tables still match.
    case verified
    /// The tables match, but these capture triggers had been dropped or changed and were
    /// recreated: application writes made while they were missing were not captured.
    case triggersRecreated([String])
}
