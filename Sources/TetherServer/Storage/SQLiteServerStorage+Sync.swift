import Foundation
import GRDB
import TetherProtocol

extension SQLiteServerStorage {
    static func partitionRow(_ name: PartitionName, _ db: Database) throws -> StoredPartition? {
        guard let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT id, latest_version, latest_salt, base_version, base_salt FROM partitions WHERE name = ?"),
            arguments: [name.rawValue])
        else { return nil }
        return StoredPartition(
            id: row["id"],
            head: PartitionHead(
                latest: ServerVersion(version: row["latest_version"], salt: row["latest_salt"]),
                base: ServerVersion(version: row["base_version"], salt: row["base_salt"])))
    }

    package func head(of partition: PartitionName) async throws -> PartitionHead? {
        try await pool.read { db in try Self.partitionRow(partition, db)?.head }
    }

    package func salt(of partition: PartitionName, version: Int64) async throws -> Int64? {
        try await pool.read { db in
            try Self.retainedSalt(of: version, in: try Self.partitionRow(partition, db), db)
        }
    }

    package func clientFile(_ id: Int64, of partition: PartitionName) async throws -> ClientFileRecord? {
        try await pool.read { db in
            guard let p = try Self.partitionRow(partition, db),
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: """
                        SELECT id, salt, integrated_seq, integrated_version, integrated_salt, confirmed_version, last_seen
                        FROM client_files WHERE id = ? AND partition_id = ?
                        """),
                    arguments: [id, p.id])
            else { return nil }
            return ClientFileRecord(
                identity: ClientFileIdentity(id: row["id"], salt: row["salt"]),
                integratedSeq: row["integrated_seq"], integratedVersion: row["integrated_version"],
                integratedSalt: row["integrated_salt"], confirmedVersion: row["confirmed_version"],
                lastSeen: Date(timeIntervalSince1970: row["last_seen"]))
        }
    }

    package func registerClientFile(in partition: PartitionName, now: Date) async throws -> (ClientFileIdentity, PartitionHead) {
        try await pool.write { db in
            let p = try Self.createPartitionIfNeeded(partition, now: now, db)
            let salt = PartitionRules.freshSalt()
            try db.cachedStatement(sql: "INSERT INTO client_files(partition_id, salt, created_at, last_seen) VALUES (?, ?, ?, ?)")
                .execute(arguments: [p.id, salt, now.timeIntervalSince1970, now.timeIntervalSince1970])
            return (ClientFileIdentity(id: db.lastInsertedRowID, salt: salt), p.head)
        }
    }

    /// The partition's row, created with ``PartitionRules/createdHead`` when it has none.
    static func createPartitionIfNeeded(_ partition: PartitionName, now: Date, _ db: Database) throws -> StoredPartition {
        if let existing = try partitionRow(partition, db) { return existing }
        let head = PartitionRules.createdHead
        try db.cachedStatement(sql: """
            INSERT INTO partitions(name, latest_version, latest_salt, base_version, base_salt, created_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """).execute(
            arguments: [partition.rawValue, head.latest.version, head.latest.salt, head.base.version, head.base.salt,
                        now.timeIntervalSince1970])
        return StoredPartition(id: db.lastInsertedRowID, head: head)
    }

    package func touchClientFile(_ id: Int64, of partition: PartitionName, now: Date, confirmedVersion: Int64) async throws {
        try await pool.write { db in
            try db.cachedStatement(sql: "UPDATE client_files SET last_seen = ?, confirmed_version = max(confirmed_version, ?) WHERE id = ?")
                .execute(arguments: [now.timeIntervalSince1970, confirmedVersion, id])
        }
    }

    package func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, uploadSalt: Int64, into partition: PartitionName, now: Date,
        scope: WriteScope
    ) async throws -> IntegrationOutcome {
        try await pool.write { db in
            guard var p = try Self.partitionRow(partition, db) else { throw StorageError.notFound("partition \(partition)") }
            guard let file = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT integrated_seq FROM client_files WHERE id = ? AND partition_id = ?"), arguments: [clientFile, p.id])
            else { throw StorageError.notFound("client file \(clientFile)") }
            let plan = UploadSequencing.plan(uploads, integratedSeq: file["integrated_seq"])
            var compensating = 0
            for upload in plan.accepted {
                compensating += try Self.append(
                    upload.changes, originFile: clientFile, originSeq: upload.lastSeq, scope: scope, to: &p, now: now, db)?.writes.count ?? 0
            }
            if !plan.accepted.isEmpty {
                try db.cachedStatement(
                    sql: "UPDATE client_files SET integrated_seq = ?, integrated_version = ?, integrated_salt = ?, last_seen = ? WHERE id = ?"
                ).execute(
                    arguments: [plan.integratedSeq, p.head.latest.version, uploadSalt, now.timeIntervalSince1970, clientFile])
            }
            return IntegrationOutcome(
                head: p.head, accepted: plan.accepted.count, ignored: plan.ignored, integratedSeq: plan.integratedSeq,
                compensatingWrites: compensating, gap: plan.gap)
        }
    }

    /// Applies `changes` to the state and appends them to the history as the version after
    /// the partition's latest, which becomes its head (its row included), with their row images
    /// and, when `scope` refused some, the compensation record. Integration and healing both
    /// write history this way.
    @discardableResult
    static func append(
        _ changes: ChangeRows, originFile: Int64, originSeq: Int64, scope: WriteScope = .whole, to p: inout StoredPartition,
        now: Date, _ db: Database
    ) throws -> CompensationRecord? {
        let (kept, images, compensation) = try applyToState(changes, partitionID: p.id, scope: scope, db)
        let version = PartitionRules.version(after: p.head.latest)
        try db.cachedStatement(sql: """
            INSERT INTO history(partition_id, version, salt, origin_file, origin_seq, created_at, changeset, images, compensations)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).execute(arguments: [
            p.id, version.version, version.salt, originFile, originSeq, now.timeIntervalSince1970, Data(kept.encoded), Data(images.encoded),
            compensation.map { Data($0.encoded) },
        ])
        p.head.latest = version
        try db.cachedStatement(sql: "UPDATE partitions SET latest_version = ?, latest_salt = ? WHERE id = ?")
            .execute(arguments: [version.version, version.salt, p.id])
        return compensation
    }

    /// Applies an upload's changes to the state in order, each read where it is in the upload
    /// and written into the stored row byte for byte (``StoredFields``), noting each row's images
    /// and refusing what `scope` does not allow (``StateChangeApplier``). Prepared statements
    /// (preparing them per row was most of the server's CPU time in bulk uploads,
    /// BENCHMARKS.md). Without write checks an insert first tries to create the row, and only a
    /// row that exists is read and merged; a delete returns the row it removed. With them, every
    /// row is read before it is written.
    private static func applyToState(
        _ changes: ChangeRows, partitionID: Int64, scope: WriteScope, _ db: Database
    ) throws -> (kept: ChangeRows, images: RowImages, compensation: CompensationRecord?) {
        let select = try db.cachedStatement(sql: "SELECT fields FROM state WHERE partition_id = ? AND tbl = ? AND key = ?")
        let create = try db.cachedStatement(sql: "INSERT INTO state(partition_id, tbl, key, fields) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")
        let put = try db.cachedStatement(sql: """
            INSERT INTO state(partition_id, tbl, key, fields) VALUES (?, ?, ?, ?)
            ON CONFLICT(partition_id, tbl, key) DO UPDATE SET fields = excluded.fields
            """)
        let delete = try db.cachedStatement(sql: "DELETE FROM state WHERE partition_id = ? AND tbl = ? AND key = ? RETURNING fields")
        var applier = StateChangeApplier(scope: scope)
        var change = StoredFields.Change(columns: changes.columns)
        let index = try Self.filterIndexColumns(db)
        func indexed(_ table: String, _ key: Data, before: [UInt8]?, after: [UInt8]?) throws {
            guard index.byTable[table] != nil else { return }
            try Self.updateFilterIndex(index, partitionID: partitionID, table: table, key: key, before: before, after: after, db)
        }
        try changes.withCursor { (cursor) throws in
            while let (kind, tableIndex, _) = cursor.nextChange() {
                let table = changes.tables[tableIndex]
                let keyBytes = Array(cursor.encodedKey)
                let key = Data(keyBytes)
                change.read(&cursor)
                if !applier.checksWrites {
                    switch kind {
                    case .delete:
                        let removed = try Data.fetchOne(delete, arguments: [partitionID, table, key]).map { [UInt8]($0) }
                        _ = try applier.admit(kind, table: table, key: keyBytes, before: removed, outcome: removed == nil ? .unchanged : .delete)
                        if removed != nil { try indexed(table, key, before: removed, after: nil) }
                        continue
                    case .insert:
                        guard case .put(let row) = try change.applied(kind, to: nil) else { continue }
                        try create.execute(arguments: [partitionID, table, key, Data(row)])
                        if db.changesCount > 0 {  // a new row
                            _ = try applier.admit(kind, table: table, key: keyBytes, before: nil, outcome: .put(row))
                            try indexed(table, key, before: nil, after: row)
                            continue
                        }
                    case .update: break
                    }
                }
                let existing = try Data.fetchOne(select, arguments: [partitionID, table, key]).map { [UInt8]($0) }
                let outcome = try change.applied(kind, to: existing)
                guard try applier.admit(kind, table: table, key: keyBytes, before: existing, outcome: outcome) else { continue }
                switch outcome {
                case .unchanged: continue
                case .put(let row):
                    try put.execute(arguments: [partitionID, table, key, Data(row)])
                    try indexed(table, key, before: existing, after: row)
                case .delete:
                    _ = try Data.fetchOne(delete, arguments: [partitionID, table, key])
                    try indexed(table, key, before: existing, after: nil)
                }
            }
        }
        return try applier.finish(changes) { table, key in
            try Data.fetchOne(select, arguments: [partitionID, table, Data(key)]).map { [UInt8]($0) }
        }
    }

    package func history(of partition: PartitionName, after version: Int64, maxEntries: Int, maxBytes: Int) async throws -> [HistoryEntry] {
        try await pool.read { db in
            guard let p = try Self.partitionRow(partition, db) else { return [] }
            let rows = try Row.fetchCursor(
                db.cachedStatement(sql: """
                    SELECT version, salt, origin_file, origin_seq, changeset, images, compensations FROM history
                    WHERE partition_id = ? AND version > ? ORDER BY version LIMIT ?
                    """),
                arguments: [p.id, version, maxEntries])
            var entries: [HistoryEntry] = []
            var bytes = 0
            while let row = try rows.next() {
                let blob: Data = row["changeset"]
                if !entries.isEmpty && bytes + blob.count > maxBytes { break }
                let changeset = [UInt8](blob)
                do { try Changeset.check(changeset) } catch { throw StorageError.corrupt("history") }
                bytes += blob.count
                let images: Data? = row["images"]
                let compensations: Data? = row["compensations"]
                entries.append(HistoryEntry(
                    version: ServerVersion(version: row["version"], salt: row["salt"]),
                    originFile: row["origin_file"], originSeq: row["origin_seq"], encodedChangeset: changeset,
                    images: images.map { [UInt8]($0) }, compensations: compensations.map { [UInt8]($0) }))
            }
            return entries
        }
    }

    package func integratedSeq(of clientFile: Int64, in partition: PartitionName, atOrBefore version: Int64) async throws -> Int64 {
        try await pool.read { db in
            guard let p = try Self.partitionRow(partition, db),
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT integrated_seq, integrated_version FROM client_files WHERE id = ? AND partition_id = ?"),
                    arguments: [clientFile, p.id])
            else { return 0 }
            let source = PartitionRules.integratedSeq(
                row["integrated_seq"], integratedVersion: row["integrated_version"], atOrBefore: version)
            if case .known(let seq) = source { return seq }
            return try Int64.fetchOne(
                db,
                sql: "SELECT max(origin_seq) FROM history WHERE partition_id = ? AND origin_file = ? AND version <= ?",
                arguments: [p.id, clientFile, version]) ?? 0
        }
    }

    package func openState(of partition: PartitionName) async throws -> any StateReader {
        try await SQLiteStateReader.open(pool: pool, partition: partition)
    }

    package func openState(of partition: PartitionName, holdable scopes: [SubscriptionScope]) async throws -> any StateReader {
        try await SQLiteStateReader.open(pool: pool, partition: partition, purpose: .holdable(scopes))
    }

    package func openState(of partition: PartitionName, changingFrom held: SubscriptionScope, to wanted: SubscriptionScope) async throws -> any StateReader {
        try await SQLiteStateReader.open(pool: pool, partition: partition, purpose: .changing(from: held, to: wanted))
    }
}

extension SQLiteServerStorage {
    package func appliedScopes(of clientFile: Int64) async throws -> AppliedScopes? {
        try await pool.read { db in
            guard let blob = try Data.fetchOne(db, sql: "SELECT scopes FROM client_file_scopes WHERE client_file = ?", arguments: [clientFile])
            else { return nil }
            return try AppliedScopes.decode([UInt8](blob))
        }
    }

    package func recordAppliedScope(_ scope: AppliedScope, initial: Bool, of clientFile: Int64) async throws {
        try await pool.write { db in
            let current = try Data.fetchOne(db, sql: "SELECT scopes FROM client_file_scopes WHERE client_file = ?", arguments: [clientFile])
                .map { try AppliedScopes.decode([UInt8]($0)) }
            let scopes = AppliedScopes.recording(scope, initial: initial, over: current)
            try db.execute(
                sql: "INSERT INTO client_file_scopes(client_file, scopes) VALUES (?, ?) ON CONFLICT(client_file) DO UPDATE SET scopes = excluded.scopes",
                arguments: [clientFile, Data(scopes.encoded)])
        }
    }
}
