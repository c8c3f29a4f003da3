/// Every state a contested row can end in: the server integrates each agent's changes in that
/// agent's order, but interleaves the agents in an order the campaign cannot see (arrival
/// order). The replay tries every interleaving — a superset of the real server orders, which
/// also keep each upload batch together and respect what each agent had downloaded — so a
/// store state outside the result cannot come from any server order: some change was lost,
/// applied against the rules, or invented.
///
/// A change of an agent in `mayMiss` may also be missing (its reset discarded unsynced
/// changes; they are in that reset's backup).
enum ServerOrderReplay {
    typealias Row = CampaignModel.Row

    /// The final states, or nil when the interleavings are more than `limit` positions (the
    /// caller falls back to the row's possible field values).
    static func outcomes(base: Row?, sequences: [[ContestedChange]], mayMiss: [Bool] = [], limit: Int = 200_000) -> Set<Row?>? {
        let agents = sequences.indices.filter { !sequences[$0].isEmpty }
        guard !agents.isEmpty else { return [base] }
        var positions = 1
        for agent in agents {
            positions *= sequences[agent].count + 1
            if positions > limit { return nil }
        }
        // Layer by layer (the number of changes applied so far): each position, which changes
        // of each agent are applied, maps to the row states some interleaving reaches there.
        var layer: [[Int]: Set<Row?>] = [Array(repeating: 0, count: agents.count): [base]]
        let total = agents.reduce(0) { $0 + sequences[$1].count }
        for _ in 0..<total {
            var next: [[Int]: Set<Row?>] = [:]
            for (position, states) in layer {
                for (slot, agent) in agents.enumerated() where position[slot] < sequences[agent].count {
                    let change = sequences[agent][position[slot]]
                    var advanced = position
                    advanced[slot] += 1
                    let miss = mayMiss.indices.contains(agent) && mayMiss[agent]
                    for state in states {
                        next[advanced, default: []].insert(change.applied(to: state))
                        if miss { next[advanced, default: []].insert(state) }
                    }
                }
            }
            layer = next
        }
        return layer.values.first ?? [base]
    }
}
