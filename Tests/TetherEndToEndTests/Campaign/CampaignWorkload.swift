import TetherTestSupport

/// An application's writes for one agent: inserts of new rows, whole-row upserts, single-field
/// updates and deletes of the rows that agent owns, alone or several in one transaction.
struct CampaignWorkload: Sendable {
    let owner: String
    private var random: SeededRandom
    private var nextRow = 0

    init(owner: String, seed: UInt64) {
        self.owner = owner
        random = SeededRandom(seed: seed)
    }

    /// The next transaction, given the rows of this owner the model believes the store holds.
    mutating func nextTransaction(ownRows: [String: CampaignModel.Row]) -> [CampaignModel.Operation] {
        let count = random.chance(0.3) ? Int.random(in: 2...4, using: &random) : 1
        var rows = ownRows
        var operations: [CampaignModel.Operation] = []
        for _ in 0..<count {
            let operation = nextOperation(rows: rows)
            switch operation {
            case .upsert(let id, let row): rows[id] = row
            case .delete(let id): rows[id] = nil
            case .setNote, .setTotal: break
            }
            operations.append(operation)
        }
        return operations
    }

    /// A round's first transaction of each agent: an upsert of the contested row `s-1`, so that
    /// every round has a row several agents wrote, whatever the faults leave of the rest.
    mutating func openingContested() -> [CampaignModel.Operation] {
        [.upsert(id: CampaignModel.contestedPrefix + "1", randomRow())]
    }

    /// Whether the next transaction on the contested partition writes contested rows.
    mutating func contests() -> Bool { random.chance(0.4) }

    /// A transaction on contested rows `s-1` … `s-<keys>` (every agent writes them): upserts,
    /// field updates and deletes, whatever the store holds (an update or delete of a missing
    /// row changes nothing).
    mutating func nextContested(keys: Int) -> [CampaignModel.Operation] {
        let count = random.chance(0.3) ? Int.random(in: 2...3, using: &random) : 1
        return (0..<count).map { _ in
            let id = CampaignModel.contestedPrefix + "\(Int.random(in: 1...keys, using: &random))"
            switch random.weighted([(Kind.upsert, 35), (.note, 25), (.total, 25), (.delete, 15)]) {
            case .note: return .setNote(id: id, randomNote())
            case .total: return .setTotal(id: id, Int.random(in: 0..<100_000, using: &random))
            case .delete: return .delete(id: id)
            default: return .upsert(id: id, randomRow())
            }
        }
    }

    /// One of `items` (the partition to write next).
    mutating func pick<T>(_ items: [T]) -> T { items.randomElement(using: &random)! }

    /// A pause between transactions, in milliseconds.
    mutating func pause() -> Int { Int.random(in: 0...60, using: &random) }

    private enum Kind { case insert, upsert, note, total, delete }

    private mutating func nextOperation(rows: [String: CampaignModel.Row]) -> CampaignModel.Operation {
        let ids = rows.keys.sorted()
        let kind: Kind =
            ids.isEmpty ? .insert
            : ids.count > 30 ? .delete
            : random.weighted([(.insert, 35), (.upsert, 15), (.note, 20), (.total, 15), (.delete, 15)])
        switch kind {
        case .insert:
            nextRow += 1
            return .upsert(id: "\(owner)-\(nextRow)", randomRow())
        case .upsert: return .upsert(id: ids.randomElement(using: &random)!, randomRow())
        case .note: return .setNote(id: ids.randomElement(using: &random)!, randomNote())
        case .total: return .setTotal(id: ids.randomElement(using: &random)!, Int.random(in: 0..<100_000, using: &random))
        case .delete: return .delete(id: ids.randomElement(using: &random)!)
        }
    }

    private mutating func randomRow() -> CampaignModel.Row {
        CampaignModel.Row(customer: "c\(Int.random(in: 0..<1000, using: &random))", total: Int.random(in: 0..<100_000, using: &random), note: randomNote())
    }

    private mutating func randomNote() -> String? {
        random.chance(0.3) ? nil : "n\(Int.random(in: 0..<1000, using: &random))"
    }
}
