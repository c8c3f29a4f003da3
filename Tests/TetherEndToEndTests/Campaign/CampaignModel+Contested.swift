/// Contested rows: a shared key range (`s-1` … `s-N`) of one partition that every agent writes.
///
/// What is checked (docs/reliability.md "Contested rows"): each agent's statements on such a
/// row are recorded as the changes its store's triggers capture (from the row before and after
/// each statement, as the application saw it). After convergence the row every store holds must
/// be one that some interleaving of all agents' changes, each agent's in its own order, produces
/// from the round's base by the server-order rules (``ServerOrderReplay``). A change is *lost*
/// when no such order explains the row: a write that should have won is missing, was applied
/// against the rules (an update re-creating a deleted row, a delete ignored), or a value appears
/// that no change carried. An agent whose reset of the partition did not recover may miss any of
/// its changes; a restored partition falls back to each field's possible values, as owned rows do.
extension CampaignModel {
    static let contestedPrefix = "s-"

    static func isContested(_ id: String) -> Bool { id.hasPrefix(contestedPrefix) }

    /// One statement on a contested row, with the row before and after it in the agent's store.
    struct ContestedStep: Sendable {
        var id: String
        var before: Row? = nil
        var after: Row? = nil
    }

    /// Records the statements of a transaction `agent`'s `sqlite3` committed on contested rows.
    mutating func acceptContested(_ steps: [ContestedStep], by agent: String, in name: String, note: String = "") {
        guard var partition = partitions[name] else { return }
        for step in steps {
            if partition.possibilities[step.id] == nil { partition.possibilities[step.id] = Possibilities(partition.base[step.id]) }
            partition.possibilities[step.id]?.add(step.after)
            guard let change = ContestedChange(before: step.before, after: step.after) else { continue }
            partition.contested[step.id, default: [:]][agent, default: []].append(change)
            partition.history[step.id, default: []].append("\(note) \(agent): \(change)")
        }
        partitions[name] = partition
    }

    /// The violation of a contested row, if the store's row is none that a server order allows.
    func checkContested(_ name: String, id: String, actual: Row?, discardedOwners: Set<String>) -> Violation? {
        guard let partition = partitions[name] else { return nil }
        let history = partition.history[id] ?? []
        if partition.restored {
            guard let possible = partition.possibilities[id], !possible.allows(actual) else { return nil }
            return Violation(partition: name, id: id, expected: "one of \(possible)", actual: actual?.description ?? "absent", history: history)
        }
        let byAgent = (partition.contested[id] ?? [:]).sorted { $0.key < $1.key }
        guard let outcomes = ServerOrderReplay.outcomes(
            base: partition.base[id], sequences: byAgent.map(\.value), mayMiss: byAgent.map { discardedOwners.contains($0.key) })
        else {
            // Too many interleavings to try: each field's possible values.
            guard let possible = partition.possibilities[id], !possible.allows(actual) else { return nil }
            return Violation(partition: name, id: id, expected: "one of \(possible)", actual: actual?.description ?? "absent", history: history)
        }
        guard !outcomes.contains(actual) else { return nil }
        let expected = outcomes.map { $0?.description ?? "absent" }.sorted()
        return Violation(
            partition: name, id: id, expected: "a server order's result: \(expected.joined(separator: " or "))",
            actual: actual?.description ?? "absent", history: history)
    }

    /// Contested rows changed this round, and those changed by more than one agent (for the summary).
    func contestedRows(of name: String) -> (changed: Int, bySeveral: Int) {
        let rows = partitions[name]?.contested.values.map(\.count) ?? []
        return (rows.count, rows.filter { $0 > 1 }.count)
    }
}

extension CampaignModel.Operation {
    /// A transaction of statements on contested rows that also prints each row before (`b|k|…`)
    /// and after (`a|k|…`) statement `k`. `BEGIN IMMEDIATE`: the rows read are the rows written.
    static func contestedScript(_ operations: [Self]) -> String {
        func row(_ tag: String, _ index: Int, _ id: String) -> String {
            "SELECT '\(tag)|\(index)|' || id || '|' || customer || '|' || total || '|' || coalesce(note, '-') FROM orders WHERE id = '\(id)';"
        }
        var lines = ["BEGIN IMMEDIATE;"]
        for (index, operation) in operations.enumerated() {
            lines += [row("b", index, operation.id), operation.sql, row("a", index, operation.id)]
        }
        return (lines + ["COMMIT;"]).joined(separator: "\n")
    }

    /// The steps of a committed ``contestedScript(_:)`` from what it printed.
    static func contestedSteps(_ operations: [Self], output: String) -> [CampaignModel.ContestedStep] {
        var steps = operations.map { CampaignModel.ContestedStep(id: $0.id) }
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 6, let index = Int(fields[1]), steps.indices.contains(index) else { continue }
            let row = CampaignModel.Row(customer: fields[3], total: Int(Double(fields[4]) ?? -1), note: fields[5] == "-" ? nil : fields[5])
            if fields[0] == "b" { steps[index].before = row } else if fields[0] == "a" { steps[index].after = row }
        }
        return steps
    }
}
