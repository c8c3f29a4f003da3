import Foundation

/// The ledger's stored health class (docs/server.md, "Device ledger"): `device_reports.health`
/// holds each entry's ``DeviceLedgerHealth`` for the cutoffs in `device_ledger_cutoffs` (one
/// row), so that the `health` order is an index walk (`device_reports_health`: class, last
/// report, name, then the key) instead of a sort of every matching entry.
///
/// A class depends on the time only through three stored moments (generated columns): when
/// the entry becomes wedged (`health_wedged_at`: its oldest unsynced change and its last upload
/// both older than the wedged cutoff), until when its error counts (`health_error_at`: its last
/// error, when newer than its last upload, against the stale cutoff), and its last report
/// (stale). Writes keep the class for the stored cutoffs (a trigger on both storages);
/// ``refresh(from:to:dialect:)`` moves the cutoffs and reclasses only the entries whose moment
/// lies between the old and the new cutoffs (three index ranges), which a health-ordered page
/// does first when its cutoffs are not the stored ones. Exact for any cutoffs, in either
/// direction. Pure: SQL text.
package enum DeviceLedgerHealthColumn {
    /// The cutoffs the stored classes are for.
    package struct Cutoffs: Sendable, Hashable {
        package var staleBefore: Double
        package var wedgedBefore: Double

        package init(staleBefore: Date, wedgedBefore: Date) {
            self.staleBefore = staleBefore.timeIntervalSince1970
            self.wedgedBefore = wedgedBefore.timeIntervalSince1970
        }

        package init(staleBefore: Double, wedgedBefore: Double) {
            self.staleBefore = staleBefore
            self.wedgedBefore = wedgedBefore
        }
    }

    /// The moment an entry becomes wedged (nil: never, with nothing unsynced).
    static let wedgedAt =
        "CASE WHEN unsynced > 0 AND unsynced_since IS NOT NULL THEN %@(unsynced_since, coalesce(last_upload_at, 0)) END"
    /// Its last error while newer than its last upload (nil: none).
    static let errorAt = "CASE WHEN last_error_at IS NOT NULL AND last_error_at > coalesce(last_upload_at, 0) THEN last_error_at END"

    /// The class from the stored moments and `stale`, `wedged` (SQL values or placeholders):
    /// ``DeviceLedgerHealth/init(_:staleBefore:wedgedBefore:)`` as SQL. `row`: a prefix for the
    /// columns (`NEW.` in a trigger).
    static func classSQL(stale: String, wedged: String, row: String = "", dialect: DeviceLedgerSQL.Dialect) -> String {
        let greatest = dialect == .sqlite ? "max" : "greatest"
        let wedgedAt = wedgedAt.replacingOccurrences(of: "%@", with: greatest).columns(prefixed: row)
        let errorAt = errorAt.columns(prefixed: row)
        return """
            CASE WHEN (\(wedgedAt)) < \(wedged) THEN 0 WHEN \(row)state = 'reset-pending' THEN 1 \
            WHEN (\(errorAt)) >= \(stale) THEN 2 WHEN \(row)reported_at < \(stale) THEN 3 ELSE 4 END
            """
    }

    /// SQLite's migration: the moments, the class (for cutoffs 0: nothing wedged or stale yet),
    /// the cutoffs' row, the triggers that class every written entry, and the indexes.
    static var sqliteMigration: String {
        let stored = "(SELECT stale_before FROM device_ledger_cutoffs WHERE id = 1)"
        let wedged = "(SELECT wedged_before FROM device_ledger_cutoffs WHERE id = 1)"
        let classOfRow = classSQL(stale: stored, wedged: wedged, dialect: .sqlite)
        let key = "user_name = NEW.user_name AND device_id = NEW.device_id AND partition = NEW.partition"
        return """
            CREATE TABLE device_ledger_cutoffs(
                id INTEGER PRIMARY KEY CHECK(id = 1), stale_before REAL NOT NULL, wedged_before REAL NOT NULL);
            INSERT INTO device_ledger_cutoffs VALUES (1, 0, 0);
            ALTER TABLE device_reports ADD COLUMN health_wedged_at REAL
                GENERATED ALWAYS AS (\(wedgedAt.replacingOccurrences(of: "%@", with: "max"))) VIRTUAL;
            ALTER TABLE device_reports ADD COLUMN health_error_at REAL GENERATED ALWAYS AS (\(errorAt)) VIRTUAL;
            ALTER TABLE device_reports ADD COLUMN health INTEGER NOT NULL DEFAULT 4;
            UPDATE device_reports SET health = \(classOfRow);
            CREATE TRIGGER device_reports_health_insert AFTER INSERT ON device_reports BEGIN
                UPDATE device_reports SET health = \(classOfRow) WHERE \(key);
            END;
            CREATE TRIGGER device_reports_health_update
            AFTER UPDATE OF state, unsynced, unsynced_since, last_upload_at, last_error_at, reported_at ON device_reports BEGIN
                UPDATE device_reports SET health = \(classOfRow) WHERE \(key);
            END;
            CREATE INDEX device_reports_health ON device_reports(health, reported_at, device_name);
            CREATE INDEX device_reports_wedged_at ON device_reports(health_wedged_at) WHERE health_wedged_at IS NOT NULL;
            CREATE INDEX device_reports_error_at ON device_reports(health_error_at) WHERE health_error_at IS NOT NULL;
            """
    }

    /// PostgreSQL's migration, as SQLite's; the trigger reads the cutoffs `FOR SHARE`, so that a
    /// refresh (which updates them) waits for the writes classed with the old ones, and they for it.
    static var postgresMigration: [String] {
        let classOfNew = classSQL(stale: "s", wedged: "w", row: "NEW.", dialect: .postgres)
        return [
            """
            CREATE TABLE device_ledger_cutoffs(
                id integer PRIMARY KEY CHECK (id = 1), stale_before double precision NOT NULL, wedged_before double precision NOT NULL)
            """,
            "INSERT INTO device_ledger_cutoffs VALUES (1, 0, 0)",
            """
            ALTER TABLE device_reports
                ADD COLUMN health_wedged_at double precision
                    GENERATED ALWAYS AS (\(wedgedAt.replacingOccurrences(of: "%@", with: "greatest"))) STORED,
                ADD COLUMN health_error_at double precision GENERATED ALWAYS AS (\(errorAt)) STORED,
                ADD COLUMN health smallint NOT NULL DEFAULT 4
            """,
            """
            CREATE FUNCTION device_reports_health() RETURNS trigger LANGUAGE plpgsql AS $tether$
            DECLARE
                s double precision;
                w double precision;
            BEGIN
                SELECT stale_before, wedged_before INTO s, w FROM device_ledger_cutoffs WHERE id = 1 FOR SHARE;
                NEW.health := \(classOfNew);
                RETURN NEW;
            END
            $tether$
            """,
            "CREATE TRIGGER device_reports_health BEFORE INSERT OR UPDATE ON device_reports FOR EACH ROW EXECUTE FUNCTION device_reports_health()",
            "UPDATE device_reports SET health = health",
            "CREATE INDEX device_reports_health ON device_reports(health, reported_at, device_name, user_name, device_id, partition)",
            "CREATE INDEX device_reports_wedged_at ON device_reports(health_wedged_at) WHERE health_wedged_at IS NOT NULL",
            "CREATE INDEX device_reports_error_at ON device_reports(health_error_at) WHERE health_error_at IS NOT NULL",
        ]
    }

    /// The stored cutoffs.
    static let cutoffsQuery = "SELECT stale_before, wedged_before FROM device_ledger_cutoffs WHERE id = 1"

    /// Moves the stored cutoffs from `old` to `new` and reclasses the entries whose class may
    /// differ between them: two statements, run in one transaction.
    static func refresh(from old: Cutoffs, to new: Cutoffs, dialect: DeviceLedgerSQL.Dialect) -> [DeviceLedgerSQL] {
        var cutoffs = DeviceLedgerSQL(dialect)
        let stale = cutoffs.bind(.real(new.staleBefore))
        let wedged = cutoffs.bind(.real(new.wedgedBefore))
        cutoffs.text = "UPDATE device_ledger_cutoffs SET stale_before = \(stale), wedged_before = \(wedged) WHERE id = 1"

        var entries = DeviceLedgerSQL(dialect)
        let newWedged = entries.bind(.real(new.wedgedBefore))
        let newErrorStale = entries.bind(.real(new.staleBefore))
        let newStale = entries.bind(.real(new.staleBefore))
        var ranges: [String] = []
        if old.staleBefore != new.staleBefore {
            for column in ["reported_at", "health_error_at"] {
                let low = entries.bind(.real(min(old.staleBefore, new.staleBefore)))
                let high = entries.bind(.real(max(old.staleBefore, new.staleBefore)))
                ranges.append("(\(column) >= \(low) AND \(column) < \(high))")
            }
        }
        if old.wedgedBefore != new.wedgedBefore {
            let low = entries.bind(.real(min(old.wedgedBefore, new.wedgedBefore)))
            let high = entries.bind(.real(max(old.wedgedBefore, new.wedgedBefore)))
            ranges.append("(health_wedged_at >= \(low) AND health_wedged_at < \(high))")
        }
        let health = """
            CASE WHEN health_wedged_at < \(newWedged) THEN 0 WHEN state = 'reset-pending' THEN 1 \
            WHEN health_error_at >= \(newErrorStale) THEN 2 WHEN reported_at < \(newStale) THEN 3 ELSE 4 END
            """
        entries.text = "UPDATE device_reports SET health = \(health) WHERE \(ranges.isEmpty ? "1 = 0" : ranges.joined(separator: " OR "))"
        return [cutoffs, entries]
    }
}

extension String {
    /// The ledger columns of a health expression with `prefix` (`NEW.`), for a trigger.
    fileprivate func columns(prefixed prefix: String) -> String {
        guard !prefix.isEmpty else { return self }
        var text = self
        for column in ["unsynced_since", "last_upload_at", "last_error_at"] {
            text = text.replacingOccurrences(of: column, with: prefix + column)
        }
        // `unsynced` alone (not the prefix of `unsynced_since`, already prefixed).
        text = text.replacingOccurrences(of: "WHEN unsynced > 0", with: "WHEN \(prefix)unsynced > 0")
        return text
    }
}
