import Foundation
import Logging
import NIOCore
import PostgresNIO
import TetherProtocol

/// Healing from the fleet in the PostgreSQL storage: the SQL around ``HealPlan``'s decisions.
/// Every change takes the partition's row lock first, as integration does.
extension PostgresServerStorage {
    package func openHeal(
        _ partition: PartitionName, window: LostWindow, mode: RestoreMode, origin: HealRecord.Origin, now: Date
    ) async throws -> HealRecord {
        try await transaction { connection in
            let p = try await Self.createPartitionIfNeeded(partition, now: now, lock: true, connection, self.logger)
            let record = HealPlan.record(partition, window: window, mode: mode, origin: origin, now: now)
            try await Self.write(record, salts: window.salts, partitionID: p.id, connection, self.logger)
            return record
        }
    }

    package func noteLostVersion(_ version: Int64, of partition: PartitionName) async throws {
        try await transaction { connection in
            guard let p = try await Self.partitionRow(partition, lock: true, connection, self.logger) else { return }
            try await Self.noteLostVersion(version, partitionID: p.id, connection, self.logger)
        }
    }

    package func heal(of partition: PartitionName) async throws -> HealRecord? {
        try await withStorageErrors {
            try await client.withConnection { connection in
                try await Self.heals(where: "p.name = $1", partition.rawValue, connection, logger).first
            }
        }
    }

    package func forgottenClientFileLastSeen(_ id: Int64, of partition: PartitionName) async throws -> Date? {
        try await withStorageErrors {
            try await client.withConnection { connection in
                for try await seen in try await connection.guardedQuery(
                    """
                    SELECT f.last_seen FROM forgotten_client_files f JOIN partitions p ON p.id = f.partition_id
                        WHERE f.id = \(id) AND p.name = \(partition.rawValue)
                    """, logger: logger
                ).decode(Double.self) {
                    return Date(timeIntervalSince1970: seen)
                }
                return nil
            }
        }
    }

    package func lostByARestore(of partition: PartitionName, version: Int64, salt: Int64) async throws -> Bool {
        try await withStorageErrors {
            try await client.withConnection { connection in
                for try await found in try await connection.guardedQuery(
                    """
                    SELECT EXISTS (SELECT 1 FROM restored_away r JOIN partitions p ON p.id = r.partition_id
                        WHERE p.name = \(partition.rawValue) AND r.version = \(version) AND r.salt = \(salt))
                    """, logger: logger
                ).decode(Bool.self) {
                    return found
                }
                return false
            }
        }
    }

    package func lostSalt(of partition: PartitionName, version: Int64) async throws -> Int64? {
        try await withStorageErrors {
            try await client.withConnection { connection in
                for try await salt in try await connection.guardedQuery(
                    """
                    SELECT w.salt FROM heal_window w JOIN partitions p ON p.id = w.partition_id
                    WHERE p.name = \(partition.rawValue) AND w.version = \(version)
                    """, logger: logger
                ).decode(Int64.self) {
                    return salt
                }
                return nil
            }
        }
    }

    package func heals() async throws -> [HealRecord] {
        try await withStorageErrors {
            try await client.withConnection { connection in try await Self.heals(where: nil, nil, connection, logger) }
        }
    }

    package func closeHeal(_ partition: PartitionName, now: Date) async throws -> HealRecord {
        try await transaction { connection in
            guard let p = try await Self.partitionRow(partition, lock: true, connection, self.logger),
                var record = try await Self.heal(partitionID: p.id, connection, self.logger), record.closedAt == nil
            else { throw StorageError.notFound("open heal of partition \(partition)") }
            record.closedAt = now
            try await Self.write(record, salts: [:], partitionID: p.id, connection, self.logger)
            return record
        }
    }

    package func contributeHeal(_ chunk: HealChunk, into partition: PartitionName, now: Date, epoch: Int64) async throws -> HealReply {
        try await transaction { connection in
            let logger = self.logger
            func reply(_ outcome: HealReply.Outcome, _ count: Int64, _ reason: String = "") -> HealReply {
                HealReply(session: chunk.session, contribution: chunk.contribution, outcome: outcome, healedChanges: count, reason: reason)
            }
            guard var p = try await Self.partitionRow(partition, lock: true, connection, logger) else {
                return reply(.notWanted, 0, "no heal is open")
            }
            if epoch != p.epoch { throw StorageError.fenced("partition \(partition)") }
            let contributionID = Int64(bitPattern: chunk.contribution)
            let V = chunk.view.version
            let record = try await Self.heal(partitionID: p.id, connection, logger)
            var contribution: HealPlan.Contribution? = nil
            for try await (view, last, healed, completed) in try await connection.guardedQuery(
                """
                SELECT view_version, last_version, healed_changes, completed FROM heal_contributions
                WHERE partition_id = \(p.id) AND id = \(contributionID)
                """, logger: logger
            ).decode((Int64, Int64, Int64, Bool).self) {
                contribution = HealPlan.Contribution(viewVersion: view, lastVersion: last, healedChanges: healed, isCompleted: completed)
            }
            var facts = HealPlan.Facts(
                record: record, windowSalt: nil, contribution: contribution, hasOlderVouchedRows: false, otherContributionsHealedUntil: 0)
            for try await (salt, older, others) in try await connection.guardedQuery(
                """
                SELECT (SELECT salt FROM heal_window WHERE partition_id = \(p.id) AND version = \(V)),
                    EXISTS(SELECT 1 FROM heal_rows WHERE partition_id = \(p.id) AND version < \(V)),
                    (SELECT coalesce(max(last_version), 0) FROM heal_contributions WHERE partition_id = \(p.id) AND id <> \(contributionID))
                """, logger: logger
            ).decode((Int64?, Bool, Int64).self) {
                facts.windowSalt = salt
                facts.hasOlderVouchedRows = older
                facts.otherContributionsHealedUntil = others
            }
            if V <= p.head.latest.version { facts.historySalt = try await Self.retainedSalt(of: V, in: p, connection, logger) }
            let admission = HealPlan.admit(chunk, facts)
            if let lostUntil = admission.lostUntil { try await Self.noteLostVersion(lostUntil, partitionID: p.id, connection, logger) }
            if let answer = HealPlan.answer(admission.decision, to: chunk, healedSoFar: contribution?.healedChanges ?? 0) { return answer }
            guard var record else { throw StorageError.corrupt("heals") }
            try await connection.guardedQuery(
                """
                INSERT INTO heal_contributions(partition_id, id, view_version) VALUES (\(p.id), \(contributionID), \(V))
                ON CONFLICT DO NOTHING
                """, logger: logger)
            let unknown = try Self.decoded(chunk.unknown).changes
            if !unknown.isEmpty {
                try await connection.guardedQuery(
                    """
                    INSERT INTO heal_unknown(partition_id, contribution, tbl, key)
                    SELECT \(p.id), \(contributionID), t, k FROM unnest(\(unknown.map(\.table))::text[],
                        \(unknown.map { ByteBuffer(bytes: $0.key.encoded) })::bytea[]) AS u(t, k)
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
            }
            let writes = try await Self.healWrites(
                try Self.decoded(chunk.rows), view: V, contribution: contributionID, record: record, p, connection, logger)
            var healed = contribution?.healedChanges ?? 0
            if !writes.isEmpty {
                try await Self.append(
                    [ChangeRows(Changeset(writes))], originFile: 0, originSeqs: [0], to: &p, now: now, connection, logger)
                healed += Int64(writes.count)
                record.healedChanges += Int64(writes.count)
                try await connection.guardedQuery(
                    """
                    UPDATE heal_contributions SET last_version = \(p.head.latest.version), healed_changes = \(healed)
                    WHERE partition_id = \(p.id) AND id = \(contributionID)
                    """, logger: logger)
            }
            guard chunk.isFinal else {
                try await Self.writeCounts(record, partitionID: p.id, connection, logger)
                return reply(.accepted, healed)
            }
            try await Self.complete(contributionID, view: V, record: record, partitionID: p.id, connection, logger)
            return reply(.completed, healed)
        }
    }

    /// Step 6: reads what the chunk's rows' decisions need (in a few queries, whatever the
    /// chunk's size), records the rows the view now vouches for, and returns the writes that
    /// put the view back.
    private static func healWrites(
        _ rows: Changeset, view: Int64, contribution: Int64, record: HealRecord, _ p: StoredPartition,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [RowChange] {
        guard !rows.isEmpty else { return [] }
        let ids = Array(Set(rows.changes.map { HealPlan.RowID(table: $0.table, key: $0.key) }))
        let tables = ids.map(\.table)
        let keys = ids.map { ByteBuffer(bytes: $0.key.encoded) }
        func rowID(_ table: String, _ key: ByteBuffer) throws(StorageError) -> HealPlan.RowID {
            do { return HealPlan.RowID(table: table, key: try RowKey.decode(key.bytes)) } catch { throw .corrupt("heal rows") }
        }
        var unknown: Set<HealPlan.RowID> = []
        var vouched: [HealPlan.RowID: Int64] = [:]
        var current: [HealPlan.RowID: [String: FieldValue]] = [:]
        for try await (table, key, isUnknown, version, fields) in try await connection.guardedQuery(
            """
            SELECT u.tbl, u.key,
                EXISTS(SELECT 1 FROM heal_unknown h WHERE h.partition_id = \(p.id) AND h.contribution = \(contribution)
                    AND h.tbl = u.tbl COLLATE "C" AND h.key = u.key),
                (SELECT r.version FROM heal_rows r WHERE r.partition_id = \(p.id) AND r.tbl = u.tbl COLLATE "C" AND r.key = u.key),
                (SELECT s.fields FROM state s WHERE s.partition_id = \(p.id) AND s.tbl = u.tbl COLLATE "C" AND s.key = u.key)
            FROM unnest(\(tables)::text[], \(keys)::bytea[]) AS u(tbl, key)
            """, logger: logger
        ).decode((String, ByteBuffer, Bool, Int64?, ByteBuffer?).self) {
            let id = try rowID(table, key)
            if isUnknown { unknown.insert(id) }
            vouched[id] = version
            if let fields {
                do { current[id] = try FieldValue.decodeFields(fields.bytes) } catch { throw StorageError.corrupt("state") }
            }
        }
        var entries: [Changeset] = []
        for try await blob in try await connection.guardedQuery(
            """
            SELECT changeset FROM history WHERE partition_id = \(p.id) AND version > \(record.restoredTo) AND origin_file <> 0
            ORDER BY version
            """, logger: logger
        ).decode(ByteBuffer.self) {
            do { entries.append(try Changeset.decode(blob.bytes)) } catch { throw StorageError.corrupt("history") }
        }
        let plan = HealPlan.chunk(
            rows, view: view, unknown: unknown, vouched: vouched, healedTo: record.healedTo,
            postRestoreOps: HealPlan.postRestoreOps(of: Set(ids), in: entries), current: current)
        if !plan.vouched.isEmpty {
            try await connection.guardedQuery(
                """
                INSERT INTO heal_rows(partition_id, tbl, key, version)
                SELECT \(p.id), t, k, \(view) FROM unnest(\(plan.vouched.map(\.table))::text[],
                    \(plan.vouched.map { ByteBuffer(bytes: $0.key.encoded) })::bytea[]) AS u(t, k)
                ON CONFLICT (partition_id, tbl, key) DO UPDATE SET version = excluded.version
                """, logger: logger)
        }
        return plan.writes
    }

    /// Step 7: the final chunk of contribution `id` of view `view` was applied.
    private static func complete(
        _ id: Int64, view: Int64, record: HealRecord, partitionID: Int64, _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        switch HealPlan.completion(view: view, healedTo: record.healedTo) {
        case .raise(let previous):
            try await connection.guardedQuery(
                """
                INSERT INTO heal_rows(partition_id, tbl, key, version)
                SELECT partition_id, tbl, key, \(previous) FROM heal_unknown WHERE partition_id = \(partitionID) AND contribution = \(id)
                ON CONFLICT DO NOTHING
                """, logger: logger)
            try await connection.guardedQuery(
                """
                DELETE FROM heal_rows r WHERE r.partition_id = \(partitionID) AND r.version < \(view) AND NOT EXISTS (
                    SELECT 1 FROM heal_unknown u WHERE u.partition_id = r.partition_id AND u.contribution = \(id)
                        AND u.tbl = r.tbl AND u.key = r.key)
                """, logger: logger)
            try await connection.guardedQuery(
                "DELETE FROM heal_rows WHERE partition_id = \(partitionID) AND version = \(view)", logger: logger)
        case .lower:
            try await connection.guardedQuery(
                """
                UPDATE heal_rows r SET version = \(view) WHERE r.partition_id = \(partitionID) AND r.version < \(view) AND NOT EXISTS (
                    SELECT 1 FROM heal_unknown u WHERE u.partition_id = r.partition_id AND u.contribution = \(id)
                        AND u.tbl = r.tbl AND u.key = r.key)
                """, logger: logger)
        }
        try await writeCounts(HealPlan.completed(record, view: view), partitionID: partitionID, connection, logger)
        try await connection.guardedQuery(
            "UPDATE heal_contributions SET completed = true WHERE partition_id = \(partitionID) AND id = \(id)", logger: logger)
        try await connection.guardedQuery(
            "DELETE FROM heal_unknown WHERE partition_id = \(partitionID) AND contribution = \(id)", logger: logger)
    }

    private static func decoded(_ rows: ChangeRows) throws(StorageError) -> Changeset {
        do { return try Changeset.decode(rows.encoded) } catch { throw .corrupt("heal chunk") }
    }

    /// Stores `record` as the partition's only one, replacing any earlier one with its window
    /// (`salts`), vouched rows, contributions and unknown keys.
    static func write(
        _ record: HealRecord, salts: [Int64: Int64], partitionID: Int64, _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        for table in ["heal_window", "heal_rows", "heal_unknown", "heal_contributions"] {
            try await connection.guardedQuery("DELETE FROM \(unescaped: table) WHERE partition_id = \(partitionID)", logger: logger)
        }
        try await connection.guardedQuery(
            """
            INSERT INTO heals(partition_id, mode, origin, restored_to, lost_until, healed_to, devices, healed_changes,
                window_known, opened_at, closed_at)
            VALUES (\(partitionID), \(record.mode.rawValue), \(record.origin.rawValue), \(record.restoredTo), \(record.lostUntil),
                \(record.healedTo), \(Int64(record.devices)), \(record.healedChanges), \(record.windowKnown),
                \(record.openedAt.timeIntervalSince1970), \(record.closedAt?.timeIntervalSince1970))
            ON CONFLICT (partition_id) DO UPDATE SET mode = excluded.mode, origin = excluded.origin,
                restored_to = excluded.restored_to, lost_until = excluded.lost_until, healed_to = excluded.healed_to,
                devices = excluded.devices, healed_changes = excluded.healed_changes, window_known = excluded.window_known,
                opened_at = excluded.opened_at, closed_at = excluded.closed_at
            """, logger: logger)
        if !salts.isEmpty {
            let versions = Array(salts.keys)
            let lostSalts = versions.map { salts[$0]! }
            try await connection.guardedQuery(
                """
                INSERT INTO heal_window(partition_id, version, salt)
                SELECT \(partitionID), v, s FROM unnest(\(versions)::bigint[], \(lostSalts)::bigint[]) AS u(v, s)
                """, logger: logger)
            try await connection.guardedQuery(
                """
                INSERT INTO restored_away(partition_id, version, salt)
                SELECT \(partitionID), v, s FROM unnest(\(versions)::bigint[], \(lostSalts)::bigint[]) AS u(v, s)
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
    }

    /// The counters and healed version a chunk changes.
    private static func writeCounts(_ record: HealRecord, partitionID: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.guardedQuery(
            """
            UPDATE heals SET healed_to = \(record.healedTo), devices = \(Int64(record.devices)), healed_changes = \(record.healedChanges)
            WHERE partition_id = \(partitionID)
            """, logger: logger)
    }

    private static func noteLostVersion(_ version: Int64, partitionID: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.guardedQuery(
            "UPDATE heals SET lost_until = greatest(lost_until, \(version)) WHERE partition_id = \(partitionID) AND closed_at IS NULL",
            logger: logger)
    }

    static func heal(partitionID: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws -> HealRecord? {
        try await heals(where: "p.id = $1", partitionID, connection, logger).first
    }

    /// The records whose partition matches `condition` (one bind, `$1`), or every record.
    private static func heals(
        where condition: String?, _ value: (any PostgresEncodable & Sendable)?, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [HealRecord] {
        var binds = PostgresBindings()
        if let value { try binds.append(value, context: .default) }
        let sql = """
            SELECT p.name, h.mode, h.origin, h.restored_to, h.lost_until, h.healed_to, h.devices, h.healed_changes, h.window_known,
                h.opened_at, h.closed_at
            FROM heals h JOIN partitions p ON p.id = h.partition_id \(condition.map { "WHERE \($0)" } ?? "") ORDER BY p.name COLLATE "C"
            """
        var records: [HealRecord] = []
        for try await row in try await connection.guardedQuery(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).decode(
            (String, String, String, Int64, Int64, Int64, Int64, Int64, Bool, Double, Double?).self)
        {
            guard let mode = HealRecord.Mode(rawValue: row.1), let origin = HealRecord.Origin(rawValue: row.2) else {
                throw StorageError.corrupt("heals")
            }
            records.append(HealRecord(
                partition: row.0, mode: mode, origin: origin, restoredTo: row.3, lostUntil: row.4, healedTo: row.5, devices: Int(row.6),
                healedChanges: row.7, windowKnown: row.8, openedAt: Date(timeIntervalSince1970: row.9),
                closedAt: row.10.map(Date.init(timeIntervalSince1970:))))
        }
        return records
    }
}
