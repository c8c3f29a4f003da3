/// Agents started and synced, the way most end-to-end tests begin.
extension Cluster {
    /// Agents named `names`, each syncing `partitions`, started one after the other and each
    /// synced on every partition before this returns.
    package func syncedAgents(_ names: [String], partitions: [String] = ["p"], extra: String = "") async throws -> [ClusterAgent] {
        let agents = try names.map { try agent($0, partitions: partitions, extra: extra) }
        for agent in agents { try await agent.start() }
        for agent in agents {
            for partition in partitions { try await agent.waitSynced(partition) }
        }
        return agents
    }
}
