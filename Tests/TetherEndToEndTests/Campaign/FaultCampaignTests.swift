import Foundation
import Synchronization
import Testing
import TetherTestSupport

/// The randomised fault campaign (see `docs/reliability.md`). `make test` runs about two
/// minutes of it; `make soak DURATION=3600` runs longer. `TETHER_CAMPAIGN_SEED=N` replays the
/// choices of an earlier run (the seed is in the summary line).
@Suite(.serialized, .timeLimit(.minutes(720)))
struct FaultCampaignTests {
    @Test func randomFaultsLoseNoChangeAndEveryStoreConverges() async throws {
        let settings = CampaignSettings.fromEnvironment()
        print("fault campaign: seed \(settings.seed), \(settings.duration)")
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
        if !campaign.refusals.isEmpty {
            print("fault campaign: writes refused by sqlite3: \(campaign.refusals.sorted { $0.key < $1.key }.map { "\($0.value)× \($0.key)" }.joined(separator: "; "))")
        }
        for violation in stats.violations { print("fault campaign: change lost: \(violation)") }
        for finding in stats.findings { print("fault campaign: finding: \(finding)") }
        #expect(stats.violations.isEmpty, "changes lost (seed \(settings.seed))")
        #expect(stats.findings.isEmpty, "findings (seed \(settings.seed))")
        #expect(stats.rounds > 0 && stats.accepted > 0, "the campaign ran")
    }
}
