import GRDB
import TetherProtocol

extension PartitionStore {
    /// Rewrites the live store, in place and in one transaction, to the full state `state`
    /// (docs/contract.md: Reset steps step 5): applications keep their open connections and see a single commit.
    ///
    /// In that transaction: the change log is emptied; when `schema` is given and differs, the
    /// tables are changed to it (tables the change breaks are dropped and recreated, nullable
    /// columns added in place); tables an application altered are recreated to the schema;
    /// only rows that differ from the state are written; when
    /// `recovering` is given, the local changes it names (normally `.pendingChanges`: the log
    /// as it is inside this transaction, so a change committed while the reset ran is never
    /// missed) are replayed by docs/contract.md "Recovery rules" and the kept ones queued
    /// for upload; and the server version becomes `serverVersion` (and the client file
    /// identity `clientFile`, when given), and the client-reset marker becomes `resetMarker` if
    /// the replay kept at least one change, nil otherwise: the reset-cycle marker is written
    /// with the data it describes (a crash can never leave one without the other), and a reset
    /// that recovered nothing leaves no marker behind (docs/contract.md: Reset modes). Nothing is captured from the rewrite itself.
    /// The store records `subscriptions` as the set its rows are of (nil, the default: the
    /// whole partition, which a reset's state is; a later bind narrows it again by subscription
    /// chunks).
    ///
    /// `keepingChangesOfAbsentRows`: the server is healing the window the store's state came
    /// from (its view was contributed), so the replay keeps updates and deletes of rows the
    /// server's state lacks instead of dropping them: another view may bring those rows back.
    ///
    /// If anything fails (a state row out of order or not fitting the schema, a recovered
    /// change not fitting it), the transaction rolls back and the store is unchanged.
    @discardableResult
    package func resetInPlace(
        to state: some StateSource,
        serverVersion: ServerVersion,
        schema newSchema: Schema? = nil,
        clientFile: ClientFileIdentity? = nil,
        recovering recoverySource: RecoverySource? = nil,
        keepingChangesOfAbsentRows keep: Bool = false,
        resetMarker: String? = nil,
        subscriptions: SubscriptionSet? = nil
    ) async throws(StoreError) -> ResetInPlaceReport {
        if let newSchema {
            let problems = Self.storeProblems(newSchema)
            guard problems.isEmpty else { throw .invalidSchema(problems: problems) }
        }
        let previous = schema
        do {
            return try await writeAttaching(state.databasePath) { db in
                var source = state
                return try MetaTable.withApplyFlag(db) {
                    // Read inside the transaction: a change an application commits while the
                    // reset runs is either in this list or waits for the rewrite to commit.
                    // The log's own changes are replayed from the log after the rewrite, a row at a
                    // time (they are read there, not held in memory); given changes are in memory.
                    var localChanges: [RowChange]?
                    var loggedThrough: Int64?
                    switch recoverySource {
                    case nil: localChanges = nil
                    case .pendingChanges: loggedThrough = try ChangeLog.maxSeq(db)
                    case .changes(let changes): localChanges = changes
                    }
                    let cleared = try ChangeLog.count(db)
                    if loggedThrough == nil { try ChangeLog.clear(db) }
                    // The log names rows, not values: the local values of the rows it names are
                    // copied aside before anything rewrites them.
                    let snapshot = try loggedThrough.map { try LoggedRowSnapshot.take(db, schema: previous, through: $0) }
                    let target = newSchema ?? previous
                    // Tables an application altered (docs/contract.md: Partitions and stores forbids it) get their schema back
                    // first, so that a schema change below starts from known tables.
                    var differences = try self.repairTables(db, schema: previous)
                    if target != previous {
                        differences += try self.replaceSchema(db, from: previous, to: target)
                    }
                    // The triggers go for the rewrite and come back before the commit, so no
                    // other connection ever sees the store without them. They would capture
                    // nothing (the apply flag is set), but SQLite runs a BEFORE INSERT trigger
                    // for every row an upsert offers, changed or not: a million trigger programs
                    // for a million-row state. The replay logs its kept changes itself.
                    try Self.dropCaptureTriggers(db)
                    let rewrite =
                        state.databasePath == nil
                        ? try StoreRewriter.rewrite(db, schema: target, source: &source)
                        : try StoreRewriter.rewrite(db, schema: target, attached: StoreRewriter.stagingSchema)
                    let recovery = try snapshot.map {
                        try RecoveryReplayer.replayLogged(db, schema: target, snapshot: $0, keepingChangesOfAbsentRows: keep)
                    } ?? localChanges.map {
                        try RecoveryReplayer.replay(db, schema: target, changes: $0, keepingChangesOfAbsentRows: keep)
                    }
                    try snapshot?.drop(db)
                    _ = try self.installTriggers(db, schema: target)
                    try MetaTable.setServerVersion(db, serverVersion)
                    if let clientFile { try MetaTable.setClientFile(db, clientFile) }
                    try MetaTable.setClientResetMarker(db, (recovery?.kept ?? 0) > 0 ? resetMarker : nil)
                    // The state's rows are of this set (a reset's state is the whole partition).
                    try MetaTable.setSubscriptions(db, subscriptions)
                    return ResetInPlaceReport(
                        rewrite: rewrite, recovery: recovery, localChangesCleared: cleared,
                        schemaDifferences: differences)
                }
            }
        } catch {
            setSchema(previous)
            throw error
        }
    }

    /// One write transaction, durable when it returns (`synchronous = FULL` for it: the
    /// connection's usual `NORMAL` may lose the last commits on a power cut, docs/store.md
    /// "Durability"), with the SQLite file at `path` (if any) attached to the connection as
    /// ``StoreRewriter/stagingSchema`` around it (SQLite attaches only outside a transaction)
    /// and detached after, whatever happens.
    func writeAttaching<T: Sendable>(
        _ path: String?, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws(StoreError) -> T {
        try await withPool { pool in
            try await pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                // Not restored: the connection stays at FULL, durable and only slower.
                defer { try? db.execute(sql: "PRAGMA synchronous = \(Self.synchronous)") }
                if let path {
                    try db.execute(sql: "ATTACH DATABASE ? AS \(StoreSQL.quote(StoreRewriter.stagingSchema))", arguments: [path])
                }
                // Outside a transaction it does not fail; if it did, the next attach would say so.
                defer { if path != nil { try? db.execute(sql: "DETACH DATABASE \(StoreSQL.quote(StoreRewriter.stagingSchema))") } }
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return .commit
                }
                guard let result else { throw StoreError.notAStore(path: path ?? self.path) }
                return result
            }
        }
    }

    /// Empties the store in place, in one transaction (the delete-store action, docs/contract.md "Manual resets and delete-store"):
    /// every user row and every pending change is removed, the server version and client
    /// file identity are cleared (the next bind is a fresh one). Returns the rows deleted.
    @discardableResult
    package func emptyInPlace() async throws(StoreError) -> Int {
        let schema = self.schema
        return try await writeAttaching(nil) { db in
            try MetaTable.withApplyFlag(db) {
                var deleted = 0
                for table in schema.tables {
                    try db.execute(sql: "DELETE FROM \(StoreSQL.quote(table.name))")
                    deleted += db.changesCount
                }
                try ChangeLog.clear(db)
                try MetaTable.setServerVersion(db, .none)
                try MetaTable.setClientFile(db, nil)
                return deleted
            }
        }
    }

    /// Changes the user tables from `old` to `new` inside a reset: tables gone are dropped,
    /// tables a breaking difference touches are dropped and recreated empty (the rewrite then
    /// fills them), nullable columns are added in place, new tables created.
    func replaceSchema(_ db: Database, from old: Schema, to new: Schema) throws -> [String] {
        for table in old.tables where new.table(table.name) == nil {
            try db.execute(sql: "DROP TABLE \(StoreSQL.quote(table.name))")
        }
        for table in new.tables {
            guard let oldTable = old.table(table.name) else {
                try db.execute(sql: StoreSQL.createTable(table))
                continue
            }
            if oldTable == table { continue }
            let diff = SchemaDiff(from: Schema(version: 1, tables: [oldTable]), to: Schema(version: 1, tables: [table]))
            if diff.isBreaking {
                try db.execute(sql: "DROP TABLE \(StoreSQL.quote(table.name))")
                try db.execute(sql: StoreSQL.createTable(table))
            } else {
                for case .columnAdded(_, let column) in diff.differences {
                    try db.execute(sql: StoreSQL.addColumn(column, to: table.name))
                }
            }
        }
        try MetaTable.setSchema(db, new)
        try installTriggers(db, schema: new)
        setSchema(new)
        return SchemaDiff(from: old, to: new).summary
    }
}
