import Foundation
import Testing
import TetherProtocol
import TetherTestSupport
import TetherTestTraits
@testable import TetherServer

/// Healing on the real storages, against THE RULE (docs/client-reset.md, "Healing a restored
/// server"): a partition is restored to A after uploads up to B; then, in random order, another
/// store uploads and 1–4 devices at views in (A, B] contribute, each diffing its view against
/// the server's state of the moment, in random chunks, rebasing when told, sometimes sending a
/// chunk twice. The final state must be every row's newest completed view (the restored value
/// when none vouched for it) with the post-restore changes folded over it.
@Suite(.postgresCluster) struct HealPropertyTests {
    typealias Row = [String: FieldValue]
    typealias Model = [Int64: Row]
    static let columns = ["a", "b", "c"]
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    /// 200 cases on SQLite, 40 on PostgreSQL, each in a partition of its own.
    @Test(arguments: StorageBackend.allCases)
    func healingEndsAtTheRule(_ backend: StorageBackend) async throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("HealPropertyTests \(backend) seed \(seed)")
        try await withStorage(backend) { storage, _ in
            var random = SeededRandom(seed: seed)
            for round in 0..<(backend == .sqlite ? 200 : 40) {
                var caseSeed = random.next()
                // HEAL_CASE=<case seed> replays one case.
                if let only = ProcessInfo.processInfo.environment["HEAL_CASE"].flatMap(UInt64.init) {
                    if round > 0 { break }
                    caseSeed = only
                }
                try await runCase(
                    SeededRandom(seed: caseSeed), storage, partition: PartitionName("heal-\(round)")!,
                    label: "\(backend) seed \(seed) round \(round) (case seed \(caseSeed))")
            }
        }
    }

    /// A random change to `model`'s keys: an insert with every column, an update of some, a delete.
    func randomChange(_ random: inout SeededRandom, keys: Int64) -> RowChange {
        let key = RowKey.integer(Int64.random(in: 0..<keys, using: &random))
        func value() -> FieldValue { random.chance(0.3) ? .null : .integer(Int64.random(in: 0..<4, using: &random)) }
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return .insert("t", key, Dictionary(uniqueKeysWithValues: Self.columns.map { ($0, value()) }))
        case 1:
            let some = Self.columns.filter { _ in random.chance(0.5) }
            return .update("t", key, Dictionary(uniqueKeysWithValues: (some.isEmpty ? ["a"] : some).map { ($0, value()) }))
        default: return .delete("t", key)
        }
    }

    static func apply(_ change: RowChange, to model: inout Model) {
        guard case .integer(let key) = change.key else { return }
        model[key] = change.write(rowExists: model[key] != nil).applied(to: model[key])
    }

    static func normalized(_ model: Model) -> Model { model.mapValues { $0.filter { !$0.value.isNull } } }

    func state(_ storage: any ServerStorage, _ partition: PartitionName) async throws -> (Model, Int64) {
        let reader = try await storage.openState(of: partition)
        var model: Model = [:]
        while true {
            let rows = try await reader.next(maxRows: 100, maxBytes: 1 << 20)
            if rows.isEmpty { break }
            for row in rows { if case .integer(let key) = row.key { model[key] = row.fields } }
        }
        let version = reader.version.version
        await reader.close()
        return (model, version)
    }

    /// A device contributing its view: the chunks left to send, computed from the server's state.
    struct Device {
        var id: UInt64
        var view: ServerVersion
        var rows: Model
        var unknown: Set<Int64>
        var pending: [HealChunk] = []
        var done = false
        var completed = false
        var sent: HealChunk? = nil
        /// The first offer: the only chunk a heal that stays open may refuse.
        var offer: HealChunk? = nil
    }

    func chunks(for device: Device, against current: Model, base: Int64, _ random: inout SeededRandom) -> [HealChunk] {
        var rows: [RowChange] = []
        for key in Set(device.rows.keys).union(current.keys).sorted() where !device.unknown.contains(key) {
            switch (device.rows[key], current[key]) {
            case (let view?, let now):
                let full = Dictionary(uniqueKeysWithValues: Self.columns.map { ($0, view[$0] ?? .null) })
                if now.map({ Self.normalized([0: $0]) }) != Self.normalized([0: full]) { rows.append(.insert("t", .integer(key), full)) }
            case (nil, _?): rows.append(.delete("t", .integer(key)))
            case (nil, nil): break
            }
        }
        var unknown = device.unknown.sorted().map { RowChange.delete("t", .integer($0)) }
        var result = [HealChunk.offer(session: 1, contribution: device.id, view: device.view, base: base)]
        repeat {
            let size = Int.random(in: 1...3, using: &random)
            let part = Array(rows.prefix(size))
            rows.removeFirst(part.count)
            let unknownPart = Array(unknown.prefix(Int.random(in: 0...2, using: &random)))
            unknown.removeFirst(unknownPart.count)
            result.append(HealChunk(
                session: 1, contribution: device.id, view: device.view, base: base, isFinal: false,
                unknown: ChangeRows(Changeset(unknownPart)), rows: ChangeRows(Changeset(part))))
        } while !rows.isEmpty || !unknown.isEmpty
        result[result.count - 1].isFinal = true
        return result
    }

    func runCase(_ random: SeededRandom, _ storage: any ServerStorage, partition: PartitionName, label: String) async throws {
        var random = random
        let keys = Int64.random(in: 3...6, using: &random)
        let (writer, _) = try await storage.registerClientFile(in: partition, now: now)
        let B = Int64.random(in: 2...7, using: &random)
        let A = Int64.random(in: 0..<B, using: &random)
        var states: [Int64: Model] = [0: [:]]
        var salts: [Int64: Int64] = [:]
        var model: Model = [:]
        var snapshot = try await storage.snapshot(of: partition, now: now)
        for version in 1...B {
            let changes = (0..<Int.random(in: 1...3, using: &random)).map { _ in randomChange(&random, keys: keys) }
            let outcome = try await storage.integrate(
                [UploadChangeset(firstSeq: version, lastSeq: version, changeset: Changeset(changes))], from: writer.id, into: partition, now: now)
            for change in changes { Self.apply(change, to: &model) }
            states[version] = model
            salts[version] = outcome.head.latest.salt
            if version == A { snapshot = try await storage.snapshot(of: partition, now: now) }
        }
        let (_, record) = try await storage.restore(partition, to: snapshot.id, mode: .heal, now: now)
        #expect(record?.restoredTo == A && record?.lostUntil == B && record?.isHealing == true, "\(label)")

        let (poster, _) = try await storage.registerClientFile(in: partition, now: now)
        var posterSeq: Int64 = 0
        var postOps: [RowChange] = []
        var devices = (0..<Int.random(in: 1...4, using: &random)).map { index -> Device in
            let V = Int64.random(in: (A + 1)...B, using: &random)
            let unknown = Set((0..<keys).filter { _ in random.chance(0.2) })
            return Device(id: UInt64(index + 1) * 1000 + UInt64(V), view: ServerVersion(version: V, salt: salts[V]!), rows: states[V]!, unknown: unknown)
        }
        var steps = 0
        while devices.contains(where: { !$0.done }) {
            steps += 1
            #expect(steps < 2000, "\(label): no progress")
            if steps >= 2000 { return }
            if random.chance(0.25) {
                let changes = (0..<Int.random(in: 1...2, using: &random)).map { _ in randomChange(&random, keys: keys) }
                posterSeq += 1
                _ = try await storage.integrate(
                    [UploadChangeset(firstSeq: posterSeq, lastSeq: posterSeq, changeset: Changeset(changes))], from: poster.id,
                    into: partition, now: now)
                postOps.append(contentsOf: changes)
                continue
            }
            let index = devices.indices.filter { !devices[$0].done }.randomElement(using: &random)!
            var device = devices[index]
            if device.pending.isEmpty {
                let (current, base) = try await state(storage, partition)
                device.pending = chunks(for: device, against: current, base: base, &random)
                if device.offer == nil { device.offer = device.pending.first }
            }
            let chunk = device.sent.flatMap { random.chance(0.15) ? $0 : nil } ?? device.pending.removeFirst()
            let reply = try await storage.contributeHeal(chunk, into: partition, now: now, epoch: try await storage.epoch(of: partition))
            device.sent = chunk
            switch reply.outcome {
            case .accepted:
                #expect(!chunk.isFinal, "\(label): a final chunk only accepted")
            case .completed:
                device.completed = true
                device.done = true
                if random.chance(0.3) {
                    let again = try await storage.contributeHeal(chunk, into: partition, now: now, epoch: try await storage.epoch(of: partition))
                    #expect(again.outcome == .completed && again.healedChanges == reply.healedChanges, "\(label): a completed re-send")
                }
            case .notWanted, .covered:
                #expect(chunk == device.offer, "\(label): only an offer is refused")
                device.done = true
            case .rebase:
                device.pending = []
                device.sent = nil
            }
            devices[index] = device
        }

        // THE RULE.
        var expected: Model = [:]
        for key in 0..<keys {
            let newest = devices.filter { $0.completed && !$0.unknown.contains(key) }.max { $0.view.version < $1.view.version }
            var row = newest.map { $0.rows[key] } ?? states[A]![key]
            for op in postOps where op.key == .integer(key) { row = op.write(rowExists: row != nil).applied(to: row) }
            expected[key] = row
        }
        let (final, _) = try await state(storage, partition)
        #expect(Self.normalized(final) == Self.normalized(expected), "\(label)")
    }
}
