import Foundation
import Synchronization
import Testing
import TetherTestSupport

/// The randomised fault campaign (see `docs/reliability.md`). `make test` runs about two
/// minutes of it; `make soak DURATION=3600` runs longer. `TETHER_CAMPAIGN_SEED=N` replays the
/// choices of an earlier run (the seed is in the summary line). The duration is shared between
/// a server on SQLite and two server instances on PostgreSQL (`TETHER_CAMPAIGN_STORAGE`:
/// `both`, the default, gives PostgreSQL 30 %; `sqlite` or `postgresql` runs one of them).
@Suite(.serialized, .timeLimit(.minutes(720)))
struct FaultCampaignTests {
    @Test func randomFaultsLoseNoChangeAndEveryStoreConverges() async throws {
        try await Self.run(.fromEnvironment(storage: .sqlite))
    }

    /// Two instances share a PostgreSQL; the agents are spread over them, and `kill-instance`
    /// kills one with SIGKILL (restarted later) while the others go on.
    @Test func onPostgreSQLWithInstancesKilledNoChangeIsLost() async throws {
        try await Self.run(.fromEnvironment(storage: .postgresql))
    }

    static func run(_ settings: CampaignSettings) async throws {
        guard settings.duration > .zero else {
            print("fault campaign on \(settings.storage): not run (TETHER_CAMPAIGN_STORAGE)")
            return
        }
        print("fault campaign: seed \(settings.seed), \(settings.storage) with \(settings.instances) instance(s), \(settings.duration)")
        let campaign = try await FaultCampaign(settings: settings)
        let stats: CampaignStats
        do {
            stats = try await campaign.run()
        } catch {
            let stats = campaign.stats.withLock { $0 }
            print("fault campaign failed (seed \(settings.seed)): \(stats.summary)")
            for finding in stats.findings { print("fault campaign: finding: \(finding)") }
            print("fault campaign: timeline: \(campaign.shared.withLock { $0.timeline }.joined(separator: " | "))")
            for agent in campaign.agents { print("fault campaign: \(agent.name)'s log ends:\n\(agent.log.suffix(6000))") }
            await campaign.tearDown()
            throw error
        }
        await campaign.tearDown()
        print(stats.summary)
        if let line = stats.convergenceLine { print(line) }
        if !campaign.refusals.isEmpty {
            print("fault campaign: writes refused by sqlite3: \(campaign.refusals.sorted { $0.key < $1.key }.map { "\($0.value)× \($0.key)" }.joined(separator: "; "))")
        }
        for violation in stats.violations { print("fault campaign: change lost: \(violation)") }
        for finding in stats.findings { print("fault campaign: finding: \(finding)") }
        #expect(stats.violations.isEmpty, "changes lost (seed \(settings.seed))")
        #expect(stats.findings.isEmpty, "findings (seed \(settings.seed))")
        #expect(stats.rounds > 0 && stats.accepted > 0, "the campaign ran")
        #expect(stats.contestedBySeveral > 0, "several agents wrote the same rows")
    }
}
