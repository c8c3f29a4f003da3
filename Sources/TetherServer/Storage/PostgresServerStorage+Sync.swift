import Foundation
import Logging
import NIOCore
import PostgresNIO
import TetherProtocol

extension PostgresServerStorage {
    /// The partition's row; `lock` takes the row lock every change to the partition takes first.
    static func partitionRow(_ name: PartitionName, lock: Bool = false, _ connection: PostgresConnection, _ logger: Logger) async throws -> StoredPartition? {
        let rows = lock
            ? try await connection.guardedExecute(PostgresHotSQL.PartitionRowLocked.self, name.rawValue, logger: logger)
            : try await connection.guardedExecute(PostgresHotSQL.PartitionRow.self, name.rawValue, logger: logger)
        for try await row in rows {
            let (id, latest, latestSalt, base, baseSalt, epoch) = try row.decode((Int64, Int64, Int64, Int64, Int64, Int64).self)
            return StoredPartition(
                id: id,
                head: PartitionHead(latest: ServerVersion(version: latest, salt: latestSalt), base: ServerVersion(version: base, salt: baseSalt)),
                epoch: epoch)
        }
        return nil
    }

    /// The partition's row, created with ``PartitionRules/createdHead`` when it has none.
    static func createPartitionIfNeeded(
        _ partition: PartitionName, now: Date, lock: Bool, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> StoredPartition {
        let head = PartitionRules.createdHead
        try await connection.guardedRun(
            PostgresHotSQL.CreatePartition.self, partition.rawValue, head.latest.version, head.latest.salt, head.base.version, head.base.salt,
            now.timeIntervalSince1970, logger: logger)
        guard let row = try await partitionRow(partition, lock: lock, connection, logger) else { throw StorageError.corrupt("partitions") }
        return row
    }

    package func head(of partition: PartitionName) async throws -> PartitionHead? {
        try await withStorageErrors {
            try await client.withConnection { connection in try await Self.partitionRow(partition, connection, logger)?.head }
        }
    }

    package func salt(of partition: PartitionName, version: Int64) async throws -> Int64? {
        try await withStorageErrors {
            try await client.withConnection { connection in
                try await Self.retainedSalt(of: version, in: try await Self.partitionRow(partition, connection, logger), connection, logger)
            }
        }
    }

    package func clientFile(_ id: Int64, of partition: PartitionName) async throws -> ClientFileRecord? {
        try await withStorageErrors {
            try await client.withConnection { connection in
                for try await row in try await connection.guardedExecute(PostgresHotSQL.ClientFile.self, id, partition.rawValue, logger: logger) {
                    let (id, salt, seq, version, uploadSalt, confirmed, lastSeen) = try row.decode(
                        (Int64, Int64, Int64, Int64, Int64, Int64, Double).self)
                    return ClientFileRecord(
                        identity: ClientFileIdentity(id: id, salt: salt), integratedSeq: seq, integratedVersion: version,
                        integratedSalt: uploadSalt, confirmedVersion: confirmed, lastSeen: Date(timeIntervalSince1970: lastSeen))
                }
                return nil
            }
        }
    }

    package func registerClientFile(in partition: PartitionName, now: Date) async throws -> (ClientFileIdentity, PartitionHead) {
        let (identity, head, _) = try await registerClientFileWithEpoch(in: partition, now: now)
        return (identity, head)
    }

    /// The partition's row (and so its epoch) is read in the registration's statement: a new
    /// device's bind to a partition that exists makes one round trip for both (a new partition:
    /// a transaction that creates it first).
    package func registerClientFileWithEpoch(in partition: PartitionName, now: Date) async throws -> (
        ClientFileIdentity, PartitionHead, epoch: Int64
    ) {
        let salt = PartitionRules.freshSalt()
        let registered = try await withStorageErrors {
            try await client.withConnection { connection -> (ClientFileIdentity, PartitionHead, epoch: Int64)? in
                for try await row in try await connection.guardedExecute(
                    PostgresHotSQL.RegisterClientFileInPartition.self, partition.rawValue, salt, now.timeIntervalSince1970, logger: logger)
                {
                    let (id, latest, latestSalt, base, baseSalt, epoch) = try row.decode((Int64, Int64, Int64, Int64, Int64, Int64).self)
                    let head = PartitionHead(latest: ServerVersion(version: latest, salt: latestSalt), base: ServerVersion(version: base, salt: baseSalt))
                    return (ClientFileIdentity(id: id, salt: salt), head, epoch)
                }
                return nil
            }
        }
        if let registered { return registered }
        return try await transaction { connection in
            let p = try await Self.createPartitionIfNeeded(partition, now: now, lock: false, connection, self.logger)
            for try await row in try await connection.guardedExecute(
                PostgresHotSQL.RegisterClientFile.self, p.id, salt, now.timeIntervalSince1970, now.timeIntervalSince1970, logger: self.logger)
            {
                return (ClientFileIdentity(id: try row.decode(Int64.self), salt: salt), p.head, p.epoch)
            }
            throw StorageError.corrupt("client_files")
        }
    }

    package func touchClientFile(_ id: Int64, of partition: PartitionName, now: Date, confirmedVersion: Int64) async throws {
        try await withStorageErrors {
            try await client.withConnection { connection in
                try await connection.guardedRun(
                    PostgresHotSQL.TouchClientFile.self, now.timeIntervalSince1970, confirmedVersion, id, logger: logger)
            }
        }
    }

    /// Integrates under the lock on the partition's row: versions follow each other in commit
    /// order on every instance. Rows are read and written in batches (`unnest`), whatever the
    /// upload's size: a handful of round trips per upload.
    package func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, uploadSalt: Int64, into partition: PartitionName, now: Date,
        scope: WriteScope
    ) async throws -> IntegrationOutcome {
        try await integrate(uploads, from: clientFile, uploadSalt: uploadSalt, into: partition, now: now, fence: nil, scope: scope)
    }

    package func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, uploadSalt: Int64, into partition: PartitionName, now: Date, epoch: Int64,
        scope: WriteScope
    ) async throws -> IntegrationOutcome {
        try await integrate(uploads, from: clientFile, uploadSalt: uploadSalt, into: partition, now: now, fence: epoch, scope: scope)
    }

    package func epoch(of partition: PartitionName) async throws -> Int64 {
        try await withStorageErrors {
            try await client.withConnection { connection in try await Self.partitionRow(partition, connection, logger)?.epoch ?? 0 }
        }
    }

    private func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, uploadSalt: Int64, into partition: PartitionName, now: Date, fence: Int64?,
        scope: WriteScope
    ) async throws -> IntegrationOutcome {
        try await transaction { connection in
            let logger = self.logger
            guard var p = try await Self.partitionRow(partition, lock: true, connection, logger) else {
                throw StorageError.notFound("partition \(partition)")
            }
            if let fence, fence != p.epoch { throw StorageError.fenced("partition \(partition)") }
            var integratedSeq: Int64? = nil
            for try await row in try await connection.guardedExecute(PostgresHotSQL.UploadIntegratedSeq.self, clientFile, p.id, logger: logger) {
                integratedSeq = try row.decode(Int64.self)
            }
            guard let integratedSeq else { throw StorageError.notFound("client file \(clientFile)") }
            let plan = UploadSequencing.plan(uploads, integratedSeq: integratedSeq)
            let accepted = plan.accepted
            var compensating = 0
            if !accepted.isEmpty {
                compensating = try await Self.append(
                    accepted.map(\.changes), originFile: clientFile, originSeqs: accepted.map(\.lastSeq), scope: scope, to: &p, now: now,
                    connection, logger)
                try await connection.guardedRun(
                    PostgresHotSQL.UploadIntegrated.self, plan.integratedSeq, p.head.latest.version, uploadSalt, now.timeIntervalSince1970, clientFile,
                    logger: logger)
            }
            return IntegrationOutcome(
                head: p.head, accepted: accepted.count, ignored: plan.ignored, integratedSeq: plan.integratedSeq,
                compensatingWrites: compensating, gap: plan.gap)
        }
    }

    /// Applies each of `changes` to the state in order and appends them to the history as the
    /// versions after the partition's latest (origin `originFile`, seqs `originSeqs`), with their
    /// row images and, when `scope` refused some changes, their compensation records; the last
    /// becomes its head (its row included). Integration and healing both write history this way.
    /// Returns the number of compensating writes.
    @discardableResult
    static func append(
        _ changes: [ChangeRows], originFile: Int64, originSeqs: [Int64], scope: WriteScope = .whole, to p: inout StoredPartition,
        now: Date, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> Int {
        let applied = try await applyToState(changes, partitionID: p.id, scope: scope, connection, logger)
        var versions: [Int64] = [], salts: [Int64] = [], blobs: [ByteBuffer] = [], images: [ByteBuffer] = []
        var compensations: [ByteBuffer] = []  // empty: none (the record's encoding never is)
        var compensating = 0
        for entry in applied {
            let version = PartitionRules.version(after: p.head.latest)
            versions.append(version.version)
            salts.append(version.salt)
            blobs.append(ByteBuffer(bytes: entry.kept.encoded))
            images.append(ByteBuffer(bytes: entry.images.encoded))
            compensations.append(ByteBuffer(bytes: entry.compensation?.encoded ?? []))
            compensating += entry.compensation?.writes.count ?? 0
            p.head.latest = version
        }
        try await connection.guardedRun(
            PostgresHotSQL.AppendHistory.self, p.id, originFile, now.timeIntervalSince1970, versions, salts, originSeqs, blobs, images,
            compensations, logger: logger)
        try await connection.guardedRun(
            PostgresHotSQL.MoveHead.self, p.head.latest.version, p.head.latest.salt, p.id, logger: logger)
        return compensating
    }

    private struct StateKey: Hashable {
        var table: String
        var key: [UInt8]
    }

    /// Reads every row the changes touch in one query, applies the changes in order with
    /// the row-apply rules, each read where it is in the upload and written into the stored row
    /// byte for byte (``StoredFields``), and writes the rows that changed in one upsert and one delete.
    private static func applyToState(
        _ uploads: [ChangeRows], partitionID: Int64, scope: WriteScope, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [(kept: ChangeRows, images: RowImages, compensation: CompensationRecord?)] {
        var order: [StateKey] = []
        var seen: Set<StateKey> = []
        for changes in uploads {
            changes.withCursor { cursor in
                while let (_, table, _) = cursor.nextChange() {
                    let key = StateKey(table: changes.tables[table], key: Array(cursor.encodedKey))
                    if seen.insert(key).inserted { order.append(key) }
                }
            }
        }
        guard !order.isEmpty else { return uploads.map { ($0, RowImages(), nil) } }
        var rows: [StateKey: [UInt8]] = [:]
        let existing = try await connection.guardedExecute(
            PostgresHotSQL.StateRowsForKeys.self, partitionID, order.map(\.table), order.map { ByteBuffer(bytes: $0.key) }, logger: logger)
        for try await row in existing {
            let (table, key, fields) = try row.decode((String, ByteBuffer, ByteBuffer).self)
            rows[StateKey(table: table, key: key.bytes)] = fields.bytes
        }
        let index = try await Self.filterIndexColumns(connection, logger)
        let original = index.isEmpty ? [:] : rows
        var dirty: Set<StateKey> = []
        var applied: [(kept: ChangeRows, images: RowImages, compensation: CompensationRecord?)] = []
        for changes in uploads {
            var change = StoredFields.Change(columns: changes.columns)
            var applier = StateChangeApplier(scope: scope)
            try changes.withCursor { (cursor) throws in
                while let (kind, table, _) = cursor.nextChange() {
                    let key = StateKey(table: changes.tables[table], key: Array(cursor.encodedKey))
                    change.read(&cursor)
                    let outcome = try change.applied(kind, to: rows[key])
                    guard try applier.admit(kind, table: key.table, key: key.key, before: rows[key], outcome: outcome) else { continue }
                    switch outcome {
                    case .unchanged: continue
                    case .put(let row): rows[key] = row
                    case .delete: rows[key] = nil
                    }
                    dirty.insert(key)
                }
            }
            applied.append(try applier.finish(changes) { table, key in rows[StateKey(table: table, key: key)] })
        }
        let puts = order.filter { dirty.contains($0) && rows[$0] != nil }
        let deletes = order.filter { dirty.contains($0) && rows[$0] == nil }
        if !puts.isEmpty {
            try await connection.guardedRun(
                PostgresHotSQL.PutStateRows.self, partitionID, puts.map(\.table), puts.map { ByteBuffer(bytes: $0.key) },
                puts.map { ByteBuffer(bytes: rows[$0]!) }, logger: logger)
        }
        if !deletes.isEmpty {
            try await connection.guardedRun(
                PostgresHotSQL.DeleteStateRows.self, partitionID, deletes.map(\.table), deletes.map { ByteBuffer(bytes: $0.key) }, logger: logger)
        }
        if !index.isEmpty {
            var removed = IndexEntries(), added = IndexEntries()
            for key in order where dirty.contains(key) && index.byTable[key.table] != nil {
                let delta = try index.delta(key.table, before: original[key], after: rows[key])
                removed.append(key.table, key.key, delta.removed)
                added.append(key.table, key.key, delta.added)
            }
            try await Self.writeIndex(removed: removed, added: added, partitionID: partitionID, connection, logger)
        }
        return applied
    }

    package func history(of partition: PartitionName, after version: Int64, maxEntries: Int, maxBytes: Int) async throws -> [HistoryEntry] {
        try await history(of: partition, after: version, maxEntries: maxEntries, maxBytes: maxBytes, fence: nil)
    }

    package func history(
        of partition: PartitionName, after version: Int64, maxEntries: Int, maxBytes: Int, epoch: Int64
    ) async throws -> [HistoryEntry] {
        try await history(of: partition, after: version, maxEntries: maxEntries, maxBytes: maxBytes, fence: epoch)
    }

    /// Reads in one `REPEATABLE READ` transaction, so the epoch checked and the entries read
    /// belong together.
    private func history(of partition: PartitionName, after version: Int64, maxEntries: Int, maxBytes: Int, fence: Int64?) async throws -> [HistoryEntry] {
        try await withStorageErrors {
            try await client.withConnection { connection in
                guard fence != nil else {
                    guard let p = try await Self.partitionRow(partition, connection, logger) else { return [] }
                    return try await Self.history(p, after: version, maxEntries: maxEntries, maxBytes: maxBytes, connection, logger)
                }
                try await connection.guardedQuery("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
                do {
                    guard let p = try await Self.partitionRow(partition, connection, logger) else {
                        try await connection.guardedQuery("COMMIT", logger: logger)
                        return []
                    }
                    if let fence, p.epoch != fence { throw StorageError.fenced("partition \(partition)") }
                    let entries = try await Self.history(p, after: version, maxEntries: maxEntries, maxBytes: maxBytes, connection, logger)
                    try await connection.guardedQuery("COMMIT", logger: logger)
                    return entries
                } catch {
                    _ = try? await connection.guardedQuery("ROLLBACK", logger: logger)  // the body's error is the answer
                    throw error
                }
            }
        }
    }

    private static func history(
        _ p: StoredPartition, after version: Int64, maxEntries: Int, maxBytes: Int, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [HistoryEntry] {
        // The page's running size decides in the database where it stops (always one entry).
        let rows = try await connection.guardedExecute(
            PostgresHotSQL.HistoryPage.self, p.id, version, Int64(maxEntries), Int64(maxBytes), logger: logger)
        var entries: [HistoryEntry] = []
        for try await row in rows {
            let (version, salt, originFile, originSeq, blob, images, compensations) = try row.decode(
                (Int64, Int64, Int64, Int64, ByteBuffer, ByteBuffer?, ByteBuffer?).self)
            let changeset = blob.bytes
            do { try Changeset.check(changeset) } catch { throw StorageError.corrupt("history") }
            entries.append(HistoryEntry(
                version: ServerVersion(version: version, salt: salt), originFile: originFile, originSeq: originSeq,
                encodedChangeset: changeset, images: images?.bytes, compensations: compensations?.bytes))
        }
        return entries
    }

    package func integratedSeq(of clientFile: Int64, in partition: PartitionName, atOrBefore version: Int64) async throws -> Int64 {
        try await withStorageErrors {
            try await client.withConnection { connection in
                guard let p = try await Self.partitionRow(partition, connection, logger) else { return 0 }
                var file: (seq: Int64, version: Int64)? = nil
                for try await row in try await connection.guardedExecute(PostgresHotSQL.IntegratedSeq.self, clientFile, p.id, logger: logger) {
                    file = try row.decode((Int64, Int64).self)
                }
                guard let file else { return 0 }
                if case .known(let seq) = PartitionRules.integratedSeq(file.seq, integratedVersion: file.version, atOrBefore: version) {
                    return seq
                }
                for try await seq in try await connection.guardedQuery(
                    """
                    SELECT max(origin_seq) FROM history WHERE partition_id = \(p.id) AND origin_file = \(clientFile) AND version <= \(version)
                    """, logger: logger
                ).decode(Int64?.self) {
                    return seq ?? 0
                }
                return 0
            }
        }
    }

    package var stateDownloads: (reading: Int, waiting: Int)? {
        (downloadSlots.inUse, downloadSlots.waitingCount)
    }

    /// Waits for one of the instance's download slots first (``DownloadSlots``); the reader
    /// gives it back when it is closed or dropped.
    package func openState(of partition: PartitionName) async throws -> any StateReader {
        try await downloadSlots.acquire()
        do {
            return try await PostgresStateReader.open(self, partition: partition, slots: downloadSlots)
        } catch {
            downloadSlots.release()
            throw error
        }
    }

    package func openState(of partition: PartitionName, holdable scopes: [SubscriptionScope]) async throws -> any StateReader {
        try await openState(of: partition, purpose: .holdable(scopes))
    }

    package func openState(of partition: PartitionName, changingFrom held: SubscriptionScope, to wanted: SubscriptionScope) async throws -> any StateReader {
        try await openState(of: partition, purpose: .changing(from: held, to: wanted))
    }

    private func openState(of partition: PartitionName, purpose: StateSelection.Purpose) async throws -> any StateReader {
        try await downloadSlots.acquire()
        do {
            return try await PostgresStateReader.open(self, partition: partition, slots: downloadSlots, purpose: purpose)
        } catch {
            downloadSlots.release()
            throw error
        }
    }
}

extension PostgresServerStorage {
    package func appliedScopes(of clientFile: Int64) async throws -> AppliedScopes? {
        try await withStorageErrors {
            try await client.withConnection { connection in
                let rows = try await connection.guardedQuery(
                    "SELECT scopes FROM client_file_scopes WHERE client_file = \(clientFile)", logger: logger)
                for try await blob in rows.decode(ByteBuffer.self) { return try AppliedScopes.decode(blob.bytes) }
                return nil
            }
        }
    }

    package func recordAppliedScope(_ scope: AppliedScope, initial: Bool, of clientFile: Int64) async throws {
        try await transaction { connection in
            var current: AppliedScopes? = nil
            let rows = try await connection.guardedQuery(
                "SELECT scopes FROM client_file_scopes WHERE client_file = \(clientFile) FOR UPDATE", logger: self.logger)
            for try await blob in rows.decode(ByteBuffer.self) { current = try AppliedScopes.decode(blob.bytes) }
            let scopes = ByteBuffer(bytes: AppliedScopes.recording(scope, initial: initial, over: current).encoded)
            try await connection.guardedQuery(
                """
                INSERT INTO client_file_scopes(client_file, scopes) VALUES (\(clientFile), \(scopes))
                ON CONFLICT (client_file) DO UPDATE SET scopes = excluded.scopes
                """, logger: self.logger)
        }
    }
}
