/// What ``ServerPolicy`` is loaded from and what changes it: the server-wide flags, the schema
/// history and the grants added at run time. The app reads it at start, ``ServerControl``
/// writes it (and re-reads it when another instance changed it), a bind re-reads the flags
/// where other instances share the storage, and `/healthz` and the watchdog read the flags to
/// know the storage answers.
package protocol PolicyStorage: Sendable {
    func flags() async throws -> ServerFlags
    func setFlags(_ flags: ServerFlags) async throws
    func schemaHistory() async throws -> [SchemaRecord]
    /// Appends a schema; when `migration` is given, every partition's state is rewritten to
    /// fit the new schema in the same transaction.
    func appendSchema(_ record: SchemaRecord, migration: StateMigration?) async throws
    /// Makes the filter index hold exactly `columns` (``FilterIndexColumns``): the entries of
    /// added columns are written for every state row, those of dropped ones removed, in one
    /// transaction.
    func reconcileFilterIndex(_ columns: FilterIndexColumns) async throws -> FilterIndexChange
    func runtimeGrants() async throws -> [RuntimeGrant]
    func setRuntimeGrant(_ grant: RuntimeGrant) async throws
}
