/// The fault campaign's model: what every store of a partition must hold after sync quiesces,
/// computed only from the application writes that `sqlite3` committed (the *accepted*
/// operations), the faults injected and how each reset ended — never from the stores.
///
/// Most rows belong to one agent (their id starts with the agent's name), so concurrent
/// writers never touch them and the last accepted write of such a row is its value —
/// unless a fault may legitimately have undone it:
/// - a server **restore** to a snapshot loses what the server accepted after the snapshot
///   (in recover modes, rows first inserted after the restore returned are still certain);
/// - a reset that did not recover (`discarded`, `manual-done`, `deleted`) loses what was
///   not yet synced — it is in that reset's backup.
/// For such rows the model keeps every value each field could have (the round's base, the
/// snapshot's, each write of the round) and the store's value must be one of them.
///
/// **Contested rows** (ids `s-…`, `CampaignModel+Contested.swift`) are written by every agent;
/// the model records each agent's captured changes in order and the store's row must be what
/// some server order of them produces (``ServerOrderReplay``).
struct CampaignModel: Sendable {
    struct Row: Hashable, Sendable, CustomStringConvertible {
        var customer: String
        var total: Int
        var note: String?

        /// As `ClusterAgent.rows` prints it: `id|customer|total|note` (`-` for null).
        func line(id: String) -> String { "\(id)|\(customer)|\(total).0|\(note ?? "-")" }
        var description: String { "\(customer)|\(total)|\(note ?? "-")" }
    }

    /// Every value a row could hold at the end of a round.
    struct Possibilities: Sendable {
        var exists: Set<Bool> = []
        var customer: Set<String> = []
        var total: Set<Int> = []
        var note: Set<String?> = []

        init(_ row: Row?) { add(row) }

        mutating func add(_ row: Row?) {
            exists.insert(row != nil)
            guard let row else { return }
            customer.insert(row.customer)
            total.insert(row.total)
            note.insert(row.note)
        }

        func allows(_ row: Row?) -> Bool {
            guard let row else { return exists.contains(false) }
            return exists.contains(true) && customer.contains(row.customer) && total.contains(row.total)
                && note.contains(row.note)
        }
    }

    /// One application write, as the workload generator made it.
    enum Operation: Sendable, Equatable {
        case upsert(id: String, Row)
        case setNote(id: String, String?)
        case setTotal(id: String, Int)
        case delete(id: String)

        var id: String {
            switch self {
            case .upsert(let id, _), .setNote(let id, _), .setTotal(let id, _), .delete(let id): id
            }
        }

        var sql: String {
            switch self {
            case .upsert(let id, let row):
                "INSERT INTO orders (id, customer, total, note) VALUES ('\(id)', '\(row.customer)', \(row.total), \(row.note.map { "'\($0)'" } ?? "NULL")) ON CONFLICT(id) DO UPDATE SET customer = excluded.customer, total = excluded.total, note = excluded.note;"
            case .setNote(let id, let note):
                "UPDATE orders SET note = \(note.map { "'\($0)'" } ?? "NULL") WHERE id = '\(id)';"
            case .setTotal(let id, let total):
                "UPDATE orders SET total = \(total) WHERE id = '\(id)';"
            case .delete(let id):
                "DELETE FROM orders WHERE id = '\(id)';"
            }
        }
    }

    /// How far the model can vouch for a partition's rows after a round.
    enum Certainty: String, Sendable {
        /// No restore and every reset recovered: every row exactly as last written.
        case exact
        /// Restored, every reset recovered: rows first inserted after the last restore exact.
        case restored
        /// A reset discarded unsynced changes (they are in its backup): rows within their possibilities.
        case discarding
    }

    struct Partition: Sendable {
        /// The converged contents at the last checkpoint.
        var base: [String: Row] = [:]
        /// `base` with every operation accepted since applied.
        var current: [String: Row] = [:]
        /// Rows touched this round, or reset to a snapshot's value.
        var possibilities: [String: Possibilities] = [:]
        /// Rows first inserted after the round's last restore (exact even when restored).
        var freshSinceRestore: Set<String> = []
        var restored = false
        /// Each row's accepted operations this round, with when they were accepted (for reports).
        var history: [String: [String]] = [:]
        /// Snapshots taken at checkpoints: id → contents then.
        var snapshots: [(id: String, rows: [String: Row])] = []
        /// Contested rows changed this round: id → agent → the changes its statements captured, in order.
        var contested: [String: [String: [ContestedChange]]] = [:]
    }

    var partitions: [String: Partition]
    /// Every owned row id ever used (ids are never reused, so "fresh" is well defined).
    private var usedIDs: Set<String> = []

    init(partitions names: [String]) {
        partitions = Dictionary(uniqueKeysWithValues: names.map { ($0, Partition()) })
    }

    func rows(of partition: String) -> [String: Row] { partitions[partition]?.current ?? [:] }

    func isUsed(_ id: String) -> Bool { usedIDs.contains(id) }

    /// Applies an operation `sqlite3` committed. `afterRestore`: it started after the
    /// partition's last restore returned.
    mutating func accept(_ operations: [Operation], in name: String, afterRestore: Bool, note: String = "") {
        guard var partition = partitions[name] else { return }
        for operation in operations {
            let id = operation.id
            partition.history[id, default: []].append("\(note) \(operation)\(afterRestore ? " (after restore)" : "")")
            let before = partition.current[id]
            if partition.possibilities[id] == nil { partition.possibilities[id] = Possibilities(partition.base[id]) }
            switch operation {
            case .upsert(_, let row):
                if !usedIDs.contains(id), afterRestore { partition.freshSinceRestore.insert(id) }
                usedIDs.insert(id)
                partition.current[id] = row
            case .setNote(_, let note):
                if before != nil { partition.current[id]?.note = note }
            case .setTotal(_, let total):
                if before != nil { partition.current[id]?.total = total }
            case .delete:
                partition.current[id] = nil
            }
            partition.possibilities[id]?.add(partition.current[id])
        }
        partitions[name] = partition
    }

    /// The server's copy of `name` went back to snapshot `id`.
    mutating func restore(_ name: String, to snapshotID: String) {
        guard var partition = partitions[name], let snapshot = partition.snapshots.first(where: { $0.id == snapshotID }) else { return }
        for id in Set(snapshot.rows.keys).union(partition.base.keys).union(partition.current.keys) {
            if partition.possibilities[id] == nil { partition.possibilities[id] = Possibilities(partition.base[id]) }
            partition.possibilities[id]?.add(snapshot.rows[id])
            partition.possibilities[id]?.add(partition.current[id])
        }
        for id in partition.history.keys { partition.history[id]?.append("restore to \(snapshotID)") }
        partition.restored = true
        partition.freshSinceRestore = []
        partitions[name] = partition
    }

    mutating func recordSnapshot(_ name: String, id: String) {
        let base = partitions[name]?.base ?? [:]
        partitions[name]?.snapshots.append((id, base))
    }

    func snapshots(of name: String) -> [String] { partitions[name]?.snapshots.map(\.id) ?? [] }

    /// Every partition's snapshots, to put back when the server's database goes back to a
    /// backup taken when these were all it had.
    var snapshotLists: [String: [(id: String, rows: [String: Row])]] {
        get { partitions.mapValues(\.snapshots) }
        set { for (name, list) in newValue { partitions[name]?.snapshots = list } }
    }

    /// A row the store holds differently from what the model allows.
    struct Violation: Sendable, CustomStringConvertible {
        var partition: String
        var id: String
        var expected: String
        var actual: String
        var history: [String] = []
        var description: String {
            "\(partition)/\(id): expected \(expected), store has \(actual); this round: \(history.joined(separator: "; "))"
        }
    }

    /// Compares the converged contents with the model. `discardedOwners`: agents with a reset of
    /// this partition this round that did not recover (only their own rows may have lost writes).
    func check(_ name: String, actual: [String: Row], discardedOwners: Set<String>) -> (certainty: Certainty, violations: [Violation]) {
        guard let partition = partitions[name] else { return (.exact, []) }
        let certainty: Certainty = !discardedOwners.isEmpty ? .discarding : partition.restored ? .restored : .exact
        var violations: [Violation] = []
        for id in Set(actual.keys).union(partition.current.keys).union(partition.possibilities.keys).sorted() {
            if Self.isContested(id) {
                if let violation = checkContested(name, id: id, actual: actual[id], discardedOwners: discardedOwners) {
                    violations.append(violation)
                }
                continue
            }
            let owner = String(id.prefix { $0 != "-" })
            let uncertain = (partition.restored && !partition.freshSinceRestore.contains(id)) || discardedOwners.contains(owner)
            let expected = partition.current[id]
            if let possible = partition.possibilities[id], uncertain {
                if !possible.allows(actual[id]) {
                    violations.append(Violation(partition: name, id: id, expected: "one of \(possible)", actual: actual[id]?.description ?? "absent", history: partition.history[id] ?? []))
                }
            } else if actual[id] != expected {
                violations.append(Violation(partition: name, id: id, expected: expected?.description ?? "absent", actual: actual[id]?.description ?? "absent", history: partition.history[id] ?? []))
            }
        }
        return (certainty, violations)
    }

    /// After a checkpoint: the converged contents become the next round's base.
    mutating func settle(_ name: String, to actual: [String: Row]) {
        partitions[name]?.base = actual
        partitions[name]?.current = actual
        partitions[name]?.possibilities = [:]
        partitions[name]?.history = [:]
        partitions[name]?.freshSinceRestore = []
        partitions[name]?.restored = false
        partitions[name]?.contested = [:]
    }
}

extension CampaignModel.Row {
    /// Parses `ClusterAgent.rows` output into rows by id.
    static func parse(_ text: String) -> [String: CampaignModel.Row] {
        var rows: [String: CampaignModel.Row] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 4 else { continue }
            let total = Int(Double(fields[2]) ?? -1)
            rows[fields[0]] = CampaignModel.Row(customer: fields[1], total: total, note: fields[3] == "-" ? nil : fields[3])
        }
        return rows
    }
}
