import Foundation
import Testing
import TetherAgent
import TetherControl
import TetherProtocol

private func tempPath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("tether-state-\(UUID().uuidString)/state.sqlite").path
}

private func record(_ id: String, _ partition: String = "p", at: Double = 100) -> ResetRecord {
    ResetRecord(
        id: id, partition: PartitionName(partition)!, error: SyncError(.divergingHistories, "restored"),
        mode: .recoverUnsyncedChanges, strategy: .recover,
        backupPath: ResetRecord.backupPath(recoveryDir: "/r", partition: PartitionName(partition)!, id: id, at: at),
        startedAt: at)
}

@Test func resetRecordsSurviveReopeningAndKeepTheirPhaseAndBackupPath() throws {
    let path = tempPath()
    defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
    var coordinator = ClientResetCoordinator(new: record("a1"))
    do {
        let db = try AgentStateDatabase(path: path)
        try db.save(coordinator.record)
        try coordinator.handle(.proceed, now: 101)
        try db.save(coordinator.record)  // persisted before the backup starts
    }
    let reopened = try AgentStateDatabase(path: path)
    let active = try #require(try reopened.activeReset(partition: PartitionName("p")!))
    #expect(active == coordinator.record)
    #expect(active.phase == .backingUp)
    #expect(active.backupPath == "/r/p/19700101T000140Z-a1.sqlite")
    #expect(ClientResetCoordinator(resuming: active).effect == .backup(path: active.backupPath))
    #expect(try reopened.activeReset(partition: PartitionName("other")!) == nil)
}

@Test func listsResetsPerPartitionOldestFirst() throws {
    let path = tempPath()
    defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
    let db = try AgentStateDatabase(path: path)
    var done = record("b", at: 200)
    done.phase = .done
    try db.save(done)
    try db.save(record("a", at: 100))
    try db.save(record("c", "q", at: 300))
    #expect(try db.resets().map(\.id) == ["a", "b", "c"])
    #expect(try db.resets(partition: PartitionName("p")!).map(\.id) == ["a", "b"])
    #expect(try db.activeReset(partition: PartitionName("p")!)?.id == "a")
}

@Test func partitionStatusRoundTrips() throws {
    let path = tempPath()
    defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
    let db = try AgentStateDatabase(path: path)
    let name = PartitionName("store-17")!
    #expect(try db.status(of: name) == PartitionStatusRow(name: name))
    let status = PartitionStatusRow(name: name, paused: true, lastError: .init(code: 203, message: "bad token", at: 5))
    try db.update(status)
    #expect(try AgentStateDatabase(path: path).status(of: name) == status)
}

@Test func stateDatabaseIsNotWorldReadable() throws {
    let path = tempPath()
    defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
    _ = try AgentStateDatabase(path: path)
    let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    #expect(mode.map { $0 & 0o007 } == 0)
}

@Test func backupRetentionKeepsTheNewestAndUnfinished() {
    func r(_ id: String, _ at: Double, done: Bool, removed: Bool = false) -> ResetRecord {
        var x = record(id, at: at)
        x.phase = done ? .done : .rewriting
        x.backupRemoved = removed
        return x
    }
    let records = [
        r("1", 1, done: true, removed: true), r("2", 2, done: false), r("3", 3, done: true),
        r("4", 4, done: true), r("5", 5, done: true), r("6", 6, done: true),
    ]
    // keep 3: 6, 5, 4 stay; 3 goes; 2 is unfinished and stays; 1 is already gone.
    #expect(BackupRetention.expired(records, keep: 3).map(\.id) == ["3"])
    #expect(BackupRetention.expired(records, keep: 10).isEmpty)
    #expect(BackupRetention.expired(records, keep: 1).map(\.id) == ["5", "4", "3"])
}

@Test func quarantinedStoresAreNeverPrunedAndDoNotCountAsBackups() {
    func r(_ id: String, _ at: Double, quarantine: Bool = false) -> ResetRecord {
        var x = record(id, at: at)
        x.phase = .done
        if quarantine {
            x.backupPath = ResetRecord.quarantinePath(recoveryDir: "/r", partition: x.partition, id: id, at: at)
            x.quarantineReason = "store /s/p.sqlite: SQLite error 26: file is not a database"
        }
        return x
    }
    let records = [r("q1", 1, quarantine: true), r("2", 2), r("q3", 3, quarantine: true), r("4", 4), r("5", 5)]
    // keep 2: 5 and 4 are the newest backups; 2 goes; the quarantined files stay.
    #expect(BackupRetention.expired(records, keep: 2).map(\.id) == ["2"])
    #expect(BackupRetention.expired(records, keep: 1).map(\.id) == ["4", "2"])
    #expect(records[0].backupPath.hasSuffix("-quarantine-q1.sqlite"))
    #expect(records[0].backupPath.hasPrefix("/r/p/19700101T000001Z"))
}

@Test func aResetRecordWrittenBeforeQuarantinesExistedStillDecodes() throws {
    var json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(record("old"))) as! [String: Any]
    json.removeValue(forKey: "quarantineReason")
    let decoded = try JSONDecoder().decode(ResetRecord.self, from: JSONSerialization.data(withJSONObject: json))
    #expect(decoded.id == "old")
    #expect(!decoded.isQuarantine)
    #expect(!decoded.report.quarantined)
}

/// Issue 32: a state database that is a symbolic link is refused, and its target is untouched.
@Test func aStateDatabaseThatIsALinkIsRefusedAndItsTargetUnchanged() throws {
    let path = tempPath()
    let directory = (path as NSString).deletingLastPathComponent
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let target = directory + "/elsewhere"
    #expect(FileManager.default.createFile(atPath: target, contents: Data(), attributes: [.posixPermissions: 0o600]))
    #expect(symlink(target, path) == 0)
    var refused: AgentStateError?
    do { _ = try AgentStateDatabase(path: path) } catch { refused = error }
    #expect(refused == .symbolicLink(path: path), "\(String(describing: refused))")
    #expect(refused?.description.contains(path) == true && refused?.description.contains("state database") == true)
    let attributes = try FileManager.default.attributesOfItem(atPath: target)
    #expect(attributes[.posixPermissions] as? Int == 0o600, "the link's target keeps its mode")
    #expect(attributes[.size] as? Int == 0, "nothing was written into the link's target")

    // The link gone, the database is created in its place with mode 0640 (set through its descriptor).
    #expect(unlink(path) == 0)
    _ = try AgentStateDatabase(path: path)
    #expect((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o640)
}

/// A reset in phase healing is resumed in it after a restart, and its healed count is kept;
/// a record written before healing existed reads back without one.
@Test func aHealingResetAndItsHealedCountSurviveReopening() throws {
    let path = tempPath()
    defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
    var healing = record("h1")
    healing.phase = .healing
    var healed = record("h2", "q")
    healed.phase = .rewriting
    healed.healedChanges = 12
    do {
        let db = try AgentStateDatabase(path: path)
        try db.save(healing)
        try db.save(healed)
    }
    let reopened = try AgentStateDatabase(path: path)
    let active = try #require(try reopened.activeReset(partition: PartitionName("p")!))
    #expect(active.phase == .healing)
    #expect(ClientResetCoordinator(resuming: active).effect == .contributeHeal)
    #expect(try reopened.activeReset(partition: PartitionName("q")!)?.healedChanges == 12)
    #expect(try reopened.resets().map(\.report.healedChanges) == [nil, 12])

    var json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(healed)) as! [String: Any]
    json.removeValue(forKey: "healedChanges")
    let old = try JSONDecoder().decode(ResetRecord.self, from: JSONSerialization.data(withJSONObject: json))
    #expect(old.healedChanges == nil)
}
