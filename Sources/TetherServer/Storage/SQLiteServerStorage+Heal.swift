import Foundation
import GRDB
import TetherProtocol

/// Healing from the fleet in the SQLite storage: the SQL around ``HealPlan``'s decisions.
extension SQLiteServerStorage {
    package func openHeal(
        _ partition: PartitionName, window: LostWindow, mode: RestoreMode, origin: HealRecord.Origin, now: Date
    ) async throws -> HealRecord {
        try await pool.write { db in
            let p = try Self.createPartitionIfNeeded(partition, now: now, db)
            let record = HealPlan.record(partition, window: window, mode: mode, origin: origin, now: now)
            try Self.write(record, salts: window.salts, partitionID: p.id, db)
            return record
        }
    }

    package func noteLostVersion(_ version: Int64, of partition: PartitionName) async throws {
        try await pool.write { db in
            guard let p = try Self.partitionRow(partition, db) else { return }
            try Self.noteLostVersion(version, partitionID: p.id, db)
        }
    }

    package func heal(of partition: PartitionName) async throws -> HealRecord? {
        try await pool.read { db in
            guard let p = try Self.partitionRow(partition, db) else { return nil }
            return try Self.heal(partitionID: p.id, db)
        }
    }

    package func lostSalt(of partition: PartitionName, version: Int64) async throws -> Int64? {
        try await pool.read { db in
            guard let p = try Self.partitionRow(partition, db) else { return nil }
            return try Self.lostSalt(of: version, partitionID: p.id, db)
        }
    }

    package func lostByARestore(of partition: PartitionName, version: Int64, salt: Int64) async throws -> Bool {
        try await pool.read { db in
            guard let p = try Self.partitionRow(partition, db) else { return false }
            return try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM restored_away WHERE partition_id = ? AND version = ? AND salt = ?)",
                arguments: [p.id, version, salt]) ?? false
        }
    }

    package func forgottenClientFileLastSeen(_ id: Int64, of partition: PartitionName) async throws -> Date? {
        try await pool.read { db in
            guard let p = try Self.partitionRow(partition, db) else { return nil }
            return try Double.fetchOne(
                db, sql: "SELECT last_seen FROM forgotten_client_files WHERE id = ? AND partition_id = ?", arguments: [id, p.id]
            ).map { Date(timeIntervalSince1970: $0) }
        }
    }

    /// The salt the partition's heal record lists for the lost version `version` (`heal_window`).
    private static func lostSalt(of version: Int64, partitionID: Int64, _ db: Database) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT salt FROM heal_window WHERE partition_id = ? AND version = ?", arguments: [partitionID, version])
    }

    package func heals() async throws -> [HealRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT p.name, h.* FROM heals h JOIN partitions p ON p.id = h.partition_id ORDER BY p.name")
                .map { try Self.healRecord($0) }
        }
    }

    package func closeHeal(_ partition: PartitionName, now: Date) async throws -> HealRecord {
        try await pool.write { db in
            guard let p = try Self.partitionRow(partition, db), var record = try Self.heal(partitionID: p.id, db), record.closedAt == nil
            else { throw StorageError.notFound("open heal of partition \(partition)") }
            record.closedAt = now
            try Self.write(record, salts: [:], partitionID: p.id, db)
            return record
        }
    }

    package func contributeHeal(_ chunk: HealChunk, into partition: PartitionName, now: Date, epoch: Int64) async throws -> HealReply {
        try await pool.write { db in
            func reply(_ outcome: HealReply.Outcome, _ count: Int64, _ reason: String = "") -> HealReply {
                HealReply(session: chunk.session, contribution: chunk.contribution, outcome: outcome, healedChanges: count, reason: reason)
            }
            guard var p = try Self.partitionRow(partition, db) else { return reply(.notWanted, 0, "no heal is open") }
            let contributionID = Int64(bitPattern: chunk.contribution)
            let V = chunk.view.version
            let record = try Self.heal(partitionID: p.id, db)
            let contribution = try Row.fetchOne(
                db, sql: "SELECT view_version, last_version, healed_changes, completed FROM heal_contributions WHERE partition_id = ? AND id = ?",
                arguments: [p.id, contributionID]
            ).map {
                HealPlan.Contribution(
                    viewVersion: $0["view_version"], lastVersion: $0["last_version"], healedChanges: $0["healed_changes"],
                    isCompleted: $0["completed"])
            }
            let facts = HealPlan.Facts(
                record: record,
                windowSalt: try Self.lostSalt(of: V, partitionID: p.id, db),
                contribution: contribution,
                hasOlderVouchedRows: try Bool.fetchOne(
                    db, sql: "SELECT EXISTS(SELECT 1 FROM heal_rows WHERE partition_id = ? AND version < ?)", arguments: [p.id, V]) ?? false,
                otherContributionsHealedUntil: try Int64.fetchOne(
                    db, sql: "SELECT coalesce(max(last_version), 0) FROM heal_contributions WHERE partition_id = ? AND id != ?",
                    arguments: [p.id, contributionID]) ?? 0,
                historySalt: V <= p.head.latest.version ? try Self.retainedSalt(of: V, in: p, db) : nil)
            let admission = HealPlan.admit(chunk, facts)
            if let lostUntil = admission.lostUntil { try Self.noteLostVersion(lostUntil, partitionID: p.id, db) }
            if let answer = HealPlan.answer(admission.decision, to: chunk, healedSoFar: contribution?.healedChanges ?? 0) { return answer }
            guard var record else { throw StorageError.corrupt("heals") }
            try db.execute(
                sql: "INSERT INTO heal_contributions(partition_id, id, view_version) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                arguments: [p.id, contributionID, V])
            for change in try Self.decoded(chunk.unknown).changes {
                try db.execute(
                    sql: "INSERT INTO heal_unknown(partition_id, contribution, tbl, key) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    arguments: [p.id, contributionID, change.table, Data(change.key.encoded)])
            }
            let writes = try Self.healWrites(try Self.decoded(chunk.rows), view: V, contribution: contributionID, record: record, p, db)
            var healed = contribution?.healedChanges ?? 0
            if !writes.isEmpty {
                try Self.append(ChangeRows(Changeset(writes)), originFile: 0, originSeq: 0, to: &p, now: now, db)
                healed += Int64(writes.count)
                record.healedChanges += Int64(writes.count)
                try db.execute(
                    sql: "UPDATE heal_contributions SET last_version = ?, healed_changes = ? WHERE partition_id = ? AND id = ?",
                    arguments: [p.head.latest.version, healed, p.id, contributionID])
            }
            guard chunk.isFinal else {
                try Self.writeCounts(record, partitionID: p.id, db)
                return reply(.accepted, healed)
            }
            try Self.complete(contributionID, view: V, record: record, partitionID: p.id, db)
            return reply(.completed, healed)
        }
    }

    /// Step 6: reads what the chunk's rows' decisions need, records the rows the view now
    /// vouches for, and returns the writes that put the view back.
    private static func healWrites(
        _ rows: Changeset, view: Int64, contribution: Int64, record: HealRecord, _ p: StoredPartition, _ db: Database
    ) throws -> [RowChange] {
        guard !rows.isEmpty else { return [] }
        let ids = Set(rows.changes.map { HealPlan.RowID(table: $0.table, key: $0.key) })
        var unknown: Set<HealPlan.RowID> = []
        var vouched: [HealPlan.RowID: Int64] = [:]
        var current: [HealPlan.RowID: [String: FieldValue]] = [:]
        for id in ids {
            let key = Data(id.key.encoded)
            if try Bool.fetchOne(
                db, sql: "SELECT EXISTS(SELECT 1 FROM heal_unknown WHERE partition_id = ? AND contribution = ? AND tbl = ? AND key = ?)",
                arguments: [p.id, contribution, id.table, key]) == true
            {
                unknown.insert(id)
            }
            vouched[id] = try Int64.fetchOne(
                db, sql: "SELECT version FROM heal_rows WHERE partition_id = ? AND tbl = ? AND key = ?", arguments: [p.id, id.table, key])
            if let bytes = try Data.fetchOne(
                db, sql: "SELECT fields FROM state WHERE partition_id = ? AND tbl = ? AND key = ?", arguments: [p.id, id.table, key])
            {
                do { current[id] = try FieldValue.decodeFields([UInt8](bytes)) } catch { throw StorageError.corrupt("state") }
            }
        }
        let entries = try Data.fetchAll(
            db, sql: "SELECT changeset FROM history WHERE partition_id = ? AND version > ? AND origin_file != 0 ORDER BY version",
            arguments: [p.id, record.restoredTo]
        ).map { blob throws(StorageError) in
            do { return try Changeset.decode([UInt8](blob)) } catch { throw .corrupt("history") }
        }
        let plan = HealPlan.chunk(
            rows, view: view, unknown: unknown, vouched: vouched, healedTo: record.healedTo,
            postRestoreOps: HealPlan.postRestoreOps(of: ids, in: entries), current: current)
        for id in plan.vouched {
            try db.execute(
                sql: """
                    INSERT INTO heal_rows(partition_id, tbl, key, version) VALUES (?, ?, ?, ?)
                    ON CONFLICT(partition_id, tbl, key) DO UPDATE SET version = excluded.version
                    """,
                arguments: [p.id, id.table, Data(id.key.encoded), view])
        }
        return plan.writes
    }

    /// Step 7: the final chunk of contribution `id` of view `view` was applied.
    private static func complete(_ id: Int64, view: Int64, record: HealRecord, partitionID: Int64, _ db: Database) throws {
        let notUnknown = """
            NOT EXISTS (SELECT 1 FROM heal_unknown u WHERE u.partition_id = heal_rows.partition_id AND u.contribution = ?
                AND u.tbl = heal_rows.tbl AND u.key = heal_rows.key)
            """
        switch HealPlan.completion(view: view, healedTo: record.healedTo) {
        case .raise(let previous):
            try db.execute(
                sql: """
                    INSERT INTO heal_rows(partition_id, tbl, key, version)
                    SELECT partition_id, tbl, key, ? FROM heal_unknown WHERE partition_id = ? AND contribution = ?
                    ON CONFLICT DO NOTHING
                    """,
                arguments: [previous, partitionID, id])
            try db.execute(
                sql: "DELETE FROM heal_rows WHERE partition_id = ? AND version < ? AND \(notUnknown)", arguments: [partitionID, view, id])
            try db.execute(sql: "DELETE FROM heal_rows WHERE partition_id = ? AND version = ?", arguments: [partitionID, view])
        case .lower:
            try db.execute(
                sql: "UPDATE heal_rows SET version = ? WHERE partition_id = ? AND version < ? AND \(notUnknown)",
                arguments: [view, partitionID, view, id])
        }
        try writeCounts(HealPlan.completed(record, view: view), partitionID: partitionID, db)
        try db.execute(sql: "UPDATE heal_contributions SET completed = 1 WHERE partition_id = ? AND id = ?", arguments: [partitionID, id])
        try db.execute(sql: "DELETE FROM heal_unknown WHERE partition_id = ? AND contribution = ?", arguments: [partitionID, id])
    }

    private static func decoded(_ rows: ChangeRows) throws(StorageError) -> Changeset {
        do { return try Changeset.decode(rows.encoded) } catch { throw .corrupt("heal chunk") }
    }

    /// Stores `record` as the partition's only one, replacing any earlier one with its window
    /// (`salts`), vouched rows, contributions and unknown keys.
    static func write(_ record: HealRecord, salts: [Int64: Int64], partitionID: Int64, _ db: Database) throws {
        for table in ["heal_window", "heal_rows", "heal_unknown", "heal_contributions"] {
            try db.execute(sql: "DELETE FROM \(table) WHERE partition_id = ?", arguments: [partitionID])
        }
        try db.execute(
            sql: """
                INSERT INTO heals(partition_id, mode, origin, restored_to, lost_until, healed_to, devices, healed_changes,
                    window_known, opened_at, closed_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(partition_id) DO UPDATE SET mode = excluded.mode, origin = excluded.origin,
                    restored_to = excluded.restored_to, lost_until = excluded.lost_until, healed_to = excluded.healed_to,
                    devices = excluded.devices, healed_changes = excluded.healed_changes, window_known = excluded.window_known,
                    opened_at = excluded.opened_at, closed_at = excluded.closed_at
                """,
            arguments: [partitionID, record.mode.rawValue, record.origin.rawValue, record.restoredTo, record.lostUntil, record.healedTo,
                        record.devices, record.healedChanges, record.windowKnown, record.openedAt.timeIntervalSince1970,
                        record.closedAt?.timeIntervalSince1970])
        for (version, salt) in salts {
            try db.execute(
                sql: "INSERT INTO heal_window(partition_id, version, salt) VALUES (?, ?, ?)", arguments: [partitionID, version, salt])
        }
        try keepRestoredAway(salts.map { ($0.key, $0.value) }, partitionID: partitionID, db)
    }

    /// Adds lost versions with their salts to `restored_away`, which only grows (``HealDetection``).
    static func keepRestoredAway(_ lost: [(version: Int64, salt: Int64)], partitionID: Int64, _ db: Database) throws {
        for (version, salt) in lost {
            try db.execute(
                sql: "INSERT INTO restored_away(partition_id, version, salt) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                arguments: [partitionID, version, salt])
        }
    }

    /// The counters and healed version a chunk changes.
    private static func writeCounts(_ record: HealRecord, partitionID: Int64, _ db: Database) throws {
        try db.execute(
            sql: "UPDATE heals SET healed_to = ?, devices = ?, healed_changes = ? WHERE partition_id = ?",
            arguments: [record.healedTo, record.devices, record.healedChanges, partitionID])
    }

    private static func noteLostVersion(_ version: Int64, partitionID: Int64, _ db: Database) throws {
        try db.execute(
            sql: "UPDATE heals SET lost_until = max(lost_until, ?) WHERE partition_id = ? AND closed_at IS NULL",
            arguments: [version, partitionID])
    }

    static func heal(partitionID: Int64, _ db: Database) throws -> HealRecord? {
        try Row.fetchOne(
            db, sql: "SELECT p.name, h.* FROM heals h JOIN partitions p ON p.id = h.partition_id WHERE h.partition_id = ?",
            arguments: [partitionID]
        ).map { try healRecord($0) }
    }

    private static func healRecord(_ row: Row) throws -> HealRecord {
        guard let mode = HealRecord.Mode(rawValue: row["mode"]), let origin = HealRecord.Origin(rawValue: row["origin"]) else {
            throw StorageError.corrupt("heals")
        }
        let closedAt: Double? = row["closed_at"]
        return HealRecord(
            partition: row["name"], mode: mode, origin: origin, restoredTo: row["restored_to"], lostUntil: row["lost_until"],
            healedTo: row["healed_to"], devices: row["devices"], healedChanges: row["healed_changes"], windowKnown: row["window_known"],
            openedAt: Date(timeIntervalSince1970: row["opened_at"]), closedAt: closedAt.map(Date.init(timeIntervalSince1970:)))
    }
}
