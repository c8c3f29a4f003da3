import Foundation
import GRDB
import TetherProtocol

extension AgentStateDatabase {
    /// The subscriptions set at run time for `partition`, if any.
    package func runtimeSubscriptions(of partition: PartitionName) throws(AgentStateError) -> RuntimeSubscriptions? {
        let row: Row? = try read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM runtime_subscriptions WHERE partition = ?", arguments: [partition.rawValue])
        }
        guard let row else { return nil }
        let bytes: Data = row["subscriptions"]
        var reader = ByteReader(Array(bytes))
        do {
            let set = try SubscriptionSet.decode(from: &reader)
            guard reader.isAtEnd else { throw WireDecodeError.malformed(field: "subscriptions", reason: "bytes after the set") }
            return RuntimeSubscriptions(set: set, configuredDigest: row["configuredDigest"], madeAt: row["madeAt"])
        } catch {
            throw .corrupt(path: path, reason: "the subscriptions set at run time for \(partition) cannot be read: \(error)")
        }
    }

    /// Records `subscriptions` as `partition`'s set made at run time (nil forgets it), durably.
    package func setRuntimeSubscriptions(_ subscriptions: RuntimeSubscriptions?, of partition: PartitionName) throws(AgentStateError) {
        try write { db in
            guard let subscriptions else {
                try db.execute(sql: "DELETE FROM runtime_subscriptions WHERE partition = ?", arguments: [partition.rawValue])
                return
            }
            try db.execute(
                sql: """
                    INSERT INTO runtime_subscriptions (partition, subscriptions, configuredDigest, madeAt) VALUES (?, ?, ?, ?)
                    ON CONFLICT(partition) DO UPDATE SET subscriptions = excluded.subscriptions,
                        configuredDigest = excluded.configuredDigest, madeAt = excluded.madeAt
                    """,
                arguments: [partition.rawValue, Data(subscriptions.set.canonicalBytes), subscriptions.configuredDigest, subscriptions.madeAt])
        }
    }
}
