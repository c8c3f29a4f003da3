import Foundation
import GRDB
import TetherControl
import TetherStore

/// `state_dir/events.sqlite`: the agent's last events (``EventLog/historyLimit``), so that
/// their numbers go on across restarts and a reader that was away — an application restarted
/// with the agent, or one that lost its connection — asks for the events after the last one
/// it handled and gets them (docs/control-protocol.md, "Events").
///
/// Each event is written before any reader sees it, in WAL mode with `synchronous = NORMAL`:
/// no fsync per event (an agent writes many on a busy day, and SD cards wear), so a kill of
/// the process loses none, a power cut may lose the last ones. The journal is a convenience,
/// not state a reset depends on: when it cannot be opened or written the agent goes on with
/// its events in memory, and says so once in the journal.
package final class EventJournal: Sendable {
    private let queue: DatabaseQueue
    package let path: String

    /// Opens or creates the journal at `path` (mode 0640); a symbolic link there is refused.
    package init(path: String) throws {
        self.path = path
        try NoFollow.createSQLiteFile(path, mode: 0o640, place: .eventJournal)
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(1)
        configuration.label = "tether.events"
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        queue = try DatabaseQueue(path: path, configuration: configuration)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: events") { db in
            try db.create(table: "event") { t in
                t.primaryKey("seq", .integer)
                t.column("json", .text).notNull()
            }
        }
        try migrator.migrate(queue)
    }

    /// The last `limit` events, oldest first. An event of a kind this release does not know (a
    /// newer agent wrote it before a downgrade) is skipped, its number still counted by ``lastSeq``.
    package func load(limit: Int) throws -> (events: [AgentEvent], lastSeq: UInt64) {
        try queue.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT seq, json FROM event ORDER BY seq DESC LIMIT ?", arguments: [limit])
            let last = rows.first.map { UInt64(max(0, $0["seq"] as Int64)) } ?? 0
            let events = rows.reversed().compactMap { row -> AgentEvent? in
                let json: String = row["json"]
                // A kind this release does not know (see above), or a damaged line: skipped.
                return try? JSONDecoder().decode(AgentEvent.self, from: Data(json.utf8))
            }
            return (events, last)
        }
    }

    /// Writes `event` (numbered already) and forgets the events `limit` or more before it.
    package func append(_ event: AgentEvent, keeping limit: Int) throws {
        let seq = Int64(event.seq)
        let line = event.jsonLine
        try queue.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO event(seq, json) VALUES (?, ?)", arguments: [seq, line])
            // Trimmed now and then, not per event: one delete per tenth of the limit.
            if seq % Int64(max(1, limit / 10)) == 0 {
                try db.execute(sql: "DELETE FROM event WHERE seq <= ?", arguments: [seq - Int64(limit)])
            }
        }
    }
}
