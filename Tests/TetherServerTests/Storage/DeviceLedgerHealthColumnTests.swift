import Foundation
import Testing
@testable import TetherServer

/// The stored health class's SQL: a refresh reclasses only the entries between the old and the
/// new cutoffs, in either direction; the trigger's class reads the written row's columns.
@Suite struct DeviceLedgerHealthColumnTests {
    typealias Cutoffs = DeviceLedgerHealthColumn.Cutoffs

    @Test func aRefreshTouchesTheRangesBetweenTheCutoffs() {
        let old = Cutoffs(staleBefore: 100, wedgedBefore: 500)
        let new = Cutoffs(staleBefore: 160, wedgedBefore: 450)
        let statements = DeviceLedgerHealthColumn.refresh(from: old, to: new, dialect: .sqlite)
        #expect(statements.count == 2)
        #expect(statements[0].text.hasPrefix("UPDATE device_ledger_cutoffs SET") && statements[0].binds == [.real(160), .real(450)])
        let entries = statements[1]
        #expect(entries.text.filter { $0 == "?" }.count == entries.binds.count)
        // The new cutoffs for the class (wedged, then stale for errors and reports), then each
        // range low to high.
        #expect(entries.binds == [
            .real(450), .real(160), .real(160), .real(100), .real(160), .real(100), .real(160), .real(450), .real(500),
        ])
        #expect(entries.text.contains("(reported_at >= ? AND reported_at < ?)"))
        #expect(entries.text.contains("(health_error_at >= ? AND health_error_at < ?)"))
        #expect(entries.text.contains("(health_wedged_at >= ? AND health_wedged_at < ?)"))
    }

    @Test func onlyTheCutoffThatMovedIsARange() {
        let old = Cutoffs(staleBefore: 100, wedgedBefore: 500)
        let stale = DeviceLedgerHealthColumn.refresh(from: old, to: Cutoffs(staleBefore: 90, wedgedBefore: 500), dialect: .postgres)[1]
        #expect(!stale.text.contains("health_wedged_at >=") && stale.text.contains("reported_at >= $4::double precision"))
        let wedged = DeviceLedgerHealthColumn.refresh(from: old, to: Cutoffs(staleBefore: 100, wedgedBefore: 501), dialect: .postgres)[1]
        #expect(!wedged.text.contains("reported_at >=") && wedged.binds.suffix(2) == [.real(500), .real(501)])
        let same = DeviceLedgerHealthColumn.refresh(from: old, to: old, dialect: .sqlite)[1]
        #expect(same.text.hasSuffix("WHERE 1 = 0"))
    }

    @Test func theTriggersClassReadsTheWrittenRow() {
        let sql = DeviceLedgerHealthColumn.classSQL(stale: "s", wedged: "w", row: "NEW.", dialect: .postgres)
        for column in ["unsynced", "unsynced_since", "last_upload_at", "last_error_at", "state", "reported_at"] {
            // Every column of the row is NEW's; none is read unprefixed.
            let unprefixed = sql.replacingOccurrences(of: "NEW.\(column)", with: "").contains(column + " ")
                || sql.replacingOccurrences(of: "NEW.\(column)", with: "").contains(column + ",")
                || sql.replacingOccurrences(of: "NEW.\(column)", with: "").contains(column + ")")
            #expect(sql.contains("NEW.\(column)") && !unprefixed, "\(column) in \(sql)")
        }
        #expect(sql.contains("greatest(NEW.unsynced_since, coalesce(NEW.last_upload_at, 0))"))
        #expect(DeviceLedgerHealthColumn.classSQL(stale: "s", wedged: "w", dialect: .sqlite).contains("max(unsynced_since"))
    }

    @Test func bothMigrationsIndexTheHealthOrder() {
        #expect(DeviceLedgerHealthColumn.sqliteMigration.contains("ON device_reports(health, reported_at, device_name)"))
        #expect(DeviceLedgerHealthColumn.postgresMigration.contains {
            $0.contains("ON device_reports(health, reported_at, device_name, user_name, device_id, partition)")
        })
        // The order's keys after the class: the index's.
        #expect(DeviceLedgerSort.health.keys == [.health, .reportedAt, .deviceName, .user, .deviceID, .partition])
    }
}
