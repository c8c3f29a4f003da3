import TetherProtocol
import TetherStore

/// TEMPORARY: the agent's contributor until the protocol's `heal` message reaches the agent's
/// connection (`SyncSession.heal(_:)`); it is then replaced by the real one over the agent's
/// session, and this file goes. Until then every view is "not wanted" and a reset goes on as
/// it did before healing existed.
struct PendingHealContributor: HealContributor {
    func contribute(
        partition: PartitionName, contribution: UInt64, view: ServerVersion, fetched: FetchedState, chunks: HealViewChunks
    ) async throws(HealContributionError) -> HealContributionResult {
        .notWanted(reason: "the server does not heal yet")
    }
}
