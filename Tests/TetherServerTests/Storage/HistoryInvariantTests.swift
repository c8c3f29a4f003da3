import Foundation
import GRDB
import Testing
import TetherTestSupport
import TetherProtocol
@testable import TetherServer

/// The restore decision, pair by pair, and the invariant checker itself.
@Suite struct HistoryInvariantTests {
    func v(_ version: Int64, _ salt: Int64) -> ServerVersion { ServerVersion(version: version, salt: salt) }

    @Test func restoreBackInTheSameLineageKeepsTheHistoryAndTheBase() {
        let plan = HistoryInvariant.restore(
            current: PartitionHead(latest: v(9, 90), base: v(2, 20)), snapshot: v(5, 50), saltInRetainedHistory: 50)
        #expect(plan == .init(head: PartitionHead(latest: v(5, 50), base: v(2, 20)), keepsHistory: true))
    }

    @Test func restoreToTheSnapshotThatIsTheHeadChangesNothing() {
        let head = PartitionHead(latest: v(5, 50), base: v(2, 20))
        #expect(HistoryInvariant.restore(current: head, snapshot: v(5, 50), saltInRetainedHistory: 50) == .init(head: head, keepsHistory: true))
    }

    @Test func restoreToTheBaseKeepsAnEmptyHistory() {
        let plan = HistoryInvariant.restore(
            current: PartitionHead(latest: v(9, 90), base: v(5, 50)), snapshot: v(5, 50), saltInRetainedHistory: 50)
        #expect(plan == .init(head: PartitionHead(latest: v(5, 50), base: v(5, 50)), keepsHistory: true))
    }

    /// The bug of issue 22: restore to A, then forward to B. B's version is either past the
    /// head (not retained) or retained with another lineage's salt.
    @Test(arguments: [nil, 77] as [Int64?])
    func restoreForwardMakesTheSnapshotTheBase(salt: Int64?) {
        let plan = HistoryInvariant.restore(
            current: PartitionHead(latest: v(6, 60), base: v(0, 0)), snapshot: v(8, 80), saltInRetainedHistory: salt)
        #expect(plan == .init(head: PartitionHead(latest: v(8, 80), base: v(8, 80)), keepsHistory: false))
    }

    @Test func restoreToASnapshotCompactedAwayMakesItTheBase() {
        let plan = HistoryInvariant.restore(
            current: PartitionHead(latest: v(9, 90), base: v(7, 70)), snapshot: v(5, 50), saltInRetainedHistory: nil)
        #expect(plan == .init(head: PartitionHead(latest: v(5, 50), base: v(5, 50)), keepsHistory: false))
    }

    @Test func restoreOfAnEmptySnapshot() {
        let kept = HistoryInvariant.restore(current: PartitionHead(latest: v(3, 30), base: .none), snapshot: .none, saltInRetainedHistory: 0)
        #expect(kept == .init(head: .empty, keepsHistory: true))
        let compacted = HistoryInvariant.restore(current: PartitionHead(latest: v(3, 30), base: v(2, 20)), snapshot: .none, saltInRetainedHistory: 0)
        #expect(compacted == .init(head: .empty, keepsHistory: false))
    }

    @Test func violationsFindEveryBrokenRule() {
        #expect(HistoryInvariant.violations(head: .empty, history: []).isEmpty)
        #expect(HistoryInvariant.violations(head: PartitionHead(latest: v(2, 20), base: .none), history: [v(1, 10), v(2, 20)]).isEmpty)
        #expect(HistoryInvariant.violations(head: PartitionHead(latest: v(4, 40), base: v(4, 40)), history: []).isEmpty)
        // The forward-restore state: head at 8, history only up to 6.
        let forward = HistoryInvariant.violations(
            head: PartitionHead(latest: v(8, 80), base: .none), history: (1...6).map { v($0, $0 * 10) })
        #expect(forward.count == 2)
        #expect(!HistoryInvariant.violations(head: PartitionHead(latest: v(2, 21), base: .none), history: [v(1, 10), v(2, 20)]).isEmpty)
        #expect(!HistoryInvariant.violations(head: PartitionHead(latest: v(2, 20), base: v(3, 30)), history: []).isEmpty)
        #expect(!HistoryInvariant.violations(head: PartitionHead(latest: v(3, 30), base: .none), history: [v(1, 10), v(3, 30)]).isEmpty)
        #expect(!HistoryInvariant.violations(head: PartitionHead(latest: v(0, 0), base: v(0, 5)), history: []).isEmpty)
        #expect(HistoryInvariant.repaired(PartitionHead(latest: v(8, 80), base: .none)) == PartitionHead(latest: v(8, 80), base: v(8, 80)))
        #expect(HistoryInvariant.repair("p", head: PartitionHead(latest: v(2, 20), base: .none), history: [v(1, 10), v(2, 20)]) == nil)
        let repair = HistoryInvariant.repair("p", head: PartitionHead(latest: v(8, 80), base: .none), history: [])
        #expect(repair?.partition == "p")
        #expect(repair?.head == PartitionHead(latest: v(8, 80), base: v(8, 80)))
        #expect(repair?.problems.isEmpty == false)
    }
}

/// Random sequences of every storage operation that moves a head — writes, snapshots, restores
/// (back, forward, to the same snapshot twice), compactions, a backup reopened as the database
/// (`restore-backup`), and sync termination — against a simple model of the partition's rows. After every
/// step: the invariant holds, the version and salt a state download carries bind, every device
/// either binds or is told to reset and then binds, and the rows are the model's.
@Suite struct HistoryPropertyTests {
    let partition = PartitionName("prop")!

    struct Snapshot {
        var id: String
        var rows: [String: Int64]
        var version: Int64
    }

    /// A device: the client file it is bound as and the version its store is at.
    struct Device {
        var file: ClientFileIdentity
        var at: ServerVersion
    }

    enum Operation: CaseIterable {
        case write, snapshot, restore, restoreLatestSnapshotAgain, compact, backupReopen, newDevice, deviceSyncs, terminateSync
    }

    @Test(arguments: 0..<24)
    func randomSequencesKeepTheInvariant(seed: Int) async throws {
        var random = SeededRandom(seed: UInt64(seed) &* 0x9E37_79B9 &+ 1)
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        var storage = try SQLiteServerStorage(directory: dir.appending("db"))
        var clock = Date(timeIntervalSince1970: 1_700_000_000)
        var rows: [String: Int64] = [:]
        var snapshots: [Snapshot] = []
        var devices: [Device] = []
        var trace: [String] = []

        let (first, _) = try await storage.registerClientFile(in: partition, now: clock)
        devices.append(Device(file: first, at: .none))
        for step in 0..<60 {
            clock += TimeInterval(Int.random(in: 1...100, using: &random))
            let operation = Operation.allCases.randomElement(using: &random)!
            trace.append("\(operation)")
            switch operation {
            case .write:
                guard let device = devices.randomElement(using: &random),
                    let file = try await storage.clientFile(device.file.id, of: partition)
                else {
                    // Its client file went with a restore: it would reset (checked below).
                    continue
                }
                var changes: [RowChange] = []
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let key = "k\(Int.random(in: 0..<6, using: &random))"
                    if Bool.random(using: &random) {
                        let value = Int64.random(in: 0..<1000, using: &random)
                        changes.append(.insert("t", .text(key), ["value": .integer(value)]))
                        rows[key] = value
                    } else {
                        changes.append(.delete("t", .text(key)))
                        rows[key] = nil
                    }
                }
                let seq = file.integratedSeq
                let outcome = try await storage.integrate(
                    [UploadChangeset(firstSeq: seq + 1, lastSeq: seq + Int64(changes.count), changeset: Changeset(changes))],
                    from: file.identity.id, into: partition, now: clock)
                #expect(outcome.accepted == 1)
            case .snapshot:
                let record = try await storage.snapshot(of: partition, now: clock)
                snapshots.append(Snapshot(id: record.id, rows: rows, version: record.version))
            case .restore, .restoreLatestSnapshotAgain:
                guard let target = operation == .restore ? snapshots.randomElement(using: &random) : snapshots.last else { continue }
                let head = try await storage.restore(partition, to: target.id)
                #expect(head.latest.version == target.version)
                rows = target.rows
            case .compact:
                let cutoff = clock - TimeInterval(Int.random(in: 0...2000, using: &random))
                _ = try await storage.compact(olderThan: cutoff)
            case .backupReopen:
                let copy = dir.appending("copy-\(step)")
                try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
                try await storage.backup(to: copy + "/" + SQLiteServerStorage.fileName)
                try await storage.close()
                storage = try SQLiteServerStorage(directory: copy)
                #expect(try await storage.repairHistories().isEmpty)
            case .terminateSync:
                // Forgets every client file (devices get 208 and reset); the head stays.
                _ = try await storage.terminateSync()
            case .newDevice:
                let (file, _) = try await storage.registerClientFile(in: partition, now: clock)
                devices.append(Device(file: file, at: .none))
            case .deviceSyncs:
                guard !devices.isEmpty else { continue }
                let index = Int.random(in: 0..<devices.count, using: &random)
                if try await bindProblem(devices[index], storage) == nil, let head = try await storage.head(of: partition) {
                    devices[index].at = head.latest
                }
            }
            try await checkEverything(storage, rows: rows, devices: &devices, trace: trace, clock: clock)
        }
        try await storage.close()
    }

    func bindProblem(_ device: Device, _ storage: SQLiteServerStorage) async throws -> SyncError? {
        guard let head = try await storage.head(of: partition) else { return nil }
        let request = BindRequest(session: 1, partition: partition.rawValue, token: "", identity: device.file, lastServerVersion: device.at)
        return BindRules.verify(
            request, clientFile: try await storage.clientFile(device.file.id, of: partition), head: head,
            saltAtVersion: try await storage.salt(of: partition, version: device.at.version))
    }

    func checkEverything(_ storage: SQLiteServerStorage, rows: [String: Int64], devices: inout [Device], trace: [String], clock: Date) async throws {
        let context = Comment(rawValue: "after \(trace.joined(separator: ", "))")
        #expect(try await storage.historyProblems(of: partition) == [], context)
        // What a bootstrap or a reset downloads binds.
        let reader = try await storage.openState(of: partition)
        var state: [String: Int64] = [:]
        while true {
            let chunk = try await reader.next(maxRows: 100, maxBytes: 1 << 20)
            if chunk.isEmpty { break }
            for change in chunk {
                if case .text(let key) = change.key, case .integer(let value) = change.fields["value"] { state[key] = value }
            }
        }
        await reader.close()
        #expect(state == rows, context)
        let downloaded = reader.version
        #expect(try await storage.salt(of: partition, version: downloaded.version) == downloaded.salt, context)
        let fresh = try await storage.registerClientFile(in: partition, now: clock).0
        #expect(try await bindProblem(Device(file: fresh, at: downloaded), storage) == nil, context)
        // Every device binds, or is told to reset, after which it binds: never a loop.
        for index in devices.indices {
            guard let problem = try await bindProblem(devices[index], storage) else { continue }
            #expect([.badClientFileIdentifier, .divergingHistories, .clientFileExpired].contains(problem.code), context)
            devices[index] = Device(file: fresh, at: downloaded)
            #expect(try await bindProblem(devices[index], storage) == nil, context)
        }
    }
}

/// The operator sequence of issue 22 on the real storage: snapshot A, write, snapshot B,
/// restore to A, restore forward to B. Before the fix, B's version was not in the history and
/// every device that reset to B was told 211 again, for ever.
@Suite struct ForwardRestoreStorageTests {
    let partition = PartitionName("shop")!
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    /// A storage with one client file of `partition`, and a way to write row `key` as its seq `seq`.
    func withStorage(
        _ body: (SQLiteServerStorage, ClientFileIdentity, _ write: (Int64, String) async throws -> Void) async throws -> Void
    ) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let storage = try SQLiteServerStorage(directory: dir.path)
        let (file, _) = try await storage.registerClientFile(in: partition, now: now)
        try await body(storage, file) { seq, key in
            _ = try await storage.integrate(
                [UploadChangeset(firstSeq: seq, lastSeq: seq, changeset: Changeset([.insert("t", .text(key), ["value": .integer(seq)])]))],
                from: file.id, into: partition, now: now)
        }
        try await storage.close()
    }

    @Test func aStoreResetToTheForwardSnapshotBinds() async throws {
        try await withStorage { storage, file, write in
            try await write(1, "a")
            let a = try await storage.snapshot(of: partition, now: now)
            try await write(2, "b")
            try await write(3, "c")
            let b = try await storage.snapshot(of: partition, now: now)
            _ = try await storage.restore(partition, to: a.id)
            let head = try await storage.restore(partition, to: b.id)
            #expect(head.latest.version == b.version)
            #expect(try await storage.historyProblems(of: partition) == [])
            let reader = try await storage.openState(of: partition)
            #expect(reader.totalRows == 3)
            await reader.close()
            // A store reset to B carries B's version and salt: it binds.
            #expect(try await storage.salt(of: partition, version: reader.version.version) == reader.version.salt)
            // A store still at A's version has no history to resume from: one reset (222).
            let atA = try await storage.salt(of: partition, version: a.version)
            let verdict = BindRules.verify(
                BindRequest(session: 1, partition: "shop", token: "", identity: file, lastServerVersion: ServerVersion(version: a.version, salt: 1)),
                clientFile: try await storage.clientFile(file.id, of: partition), head: head, saltAtVersion: atA)
            #expect(verdict?.code == .clientFileExpired)
            // And the sequence again, to the same snapshot twice.
            _ = try await storage.restore(partition, to: b.id)
            #expect(try await storage.historyProblems(of: partition) == [])
        }
    }

    /// A database written by the old code (head past its history) is repaired at open.
    @Test func aBrokenHistoryIsRepairedAtStart() async throws {
        try await withStorage { storage, _, write in
            try await write(1, "a")
            try await storage.pool.write { db in
                try db.execute(sql: "UPDATE partitions SET latest_version = 5, latest_salt = 55")
            }
            #expect(try await storage.historyProblems(of: partition).count == 2)
            let repairs = try await storage.repairHistories()
            #expect(repairs.map(\.partition) == ["shop"])
            #expect(repairs.first?.head == PartitionHead(latest: ServerVersion(version: 5, salt: 55), base: ServerVersion(version: 5, salt: 55)))
            #expect(try await storage.historyProblems(of: partition) == [])
            #expect(try await storage.repairHistories().isEmpty)
        }
    }
}

/// The one upload-sequencing rule both storages integrate by.
@Suite struct UploadSequencingTests {
    func batch(_ after: Int64, _ last: Int64) -> UploadChangeset {
        UploadChangeset(afterSeq: after, firstSeq: after + 1, lastSeq: last, changeset: Changeset())
    }

    @Test func resendsAreSkippedFollowersTakenAndAGapStopsTheRest() {
        let plan = UploadSequencing.plan([batch(0, 2), batch(2, 5), batch(5, 6), batch(8, 9), batch(6, 7)], integratedSeq: 5)
        #expect(plan.ignored == 2)
        #expect(plan.accepted == [batch(5, 6)])
        #expect(plan.integratedSeq == 6)
        #expect(plan.gap == UploadGap(afterSeq: 8, integratedSeq: 6))
        #expect(UploadSequencing.plan([], integratedSeq: 3) == .init(accepted: [], ignored: 0, integratedSeq: 3, gap: nil))
    }
}
