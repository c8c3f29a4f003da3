import Testing
import TetherControl
import TetherProtocol
@testable import TetherAgent

/// What a partition announces and shows of a state download and of a reset-causing error.
@Suite struct PartitionReporterTests {
    static func reporter(_ agent: ScriptedAgent) -> PartitionReporter {
        PartitionReporter(
            context: agent, log: agent.logger, statusChanges: StatusChanges(),
            figures: PartitionStatus(name: ResetFixture.partition, state: .connecting))
    }

    static func progress(_ rows: Int64) -> DownloadProgress {
        DownloadProgress(rowsDone: rows, rowsTotal: 100, bytesDone: rows * 10, bytesTotal: 1000)
    }

    @Test func aDownloadIsAnnouncedWhenItStartsAtEachFurtherTenthAndWhenItEnds() async throws {
        let fixture = try await ResetFixture(synced: [])
        let agent = try ScriptedAgent(fixture)
        var reporter = Self.reporter(agent)
        for rows: Int64 in [0, 5, 10, 15, 30, 100] {
            reporter.downloadProgress(Self.progress(rows), partition: ResetFixture.partition)
        }
        #expect(reporter.figures.download?.rowsDone == 100)
        reporter.downloadEnded(complete: true, partition: ResetFixture.partition)
        #expect(reporter.figures.download == nil)
        // The next download is announced from its start again.
        reporter.downloadProgress(Self.progress(5), partition: ResetFixture.partition)
        reporter.downloadEnded(complete: false, partition: ResetFixture.partition)

        let downloads = agent.events.log.recent().filter { $0.event == .download }
        #expect(downloads.map(\.phase) == ["started", "progress", "progress", "progress", "finished", "started", "finished"])
        #expect(downloads.map(\.message) == ["0 %", "10 %", "30 %", "100 %", nil, "5 %", nil])
        #expect(downloads.map(\.outcome) == [nil, nil, nil, nil, "complete", nil, "interrupted"])
    }

    @Test func aHeldErrorIsAnnouncedOnceWithItsResetsID() async throws {
        let fixture = try await ResetFixture(synced: [])
        let agent = try ScriptedAgent(fixture)
        var reporter = Self.reporter(agent)
        let diverged = SyncError(.divergingHistories, "diverged", action: .clientReset)
        reporter.announce(diverged, resetID: nil, heldForItsReset: true, settings: fixture.context.partition)
        #expect(agent.events.log.recent().filter { $0.event == .syncError }.isEmpty, "held until its reset is recorded")
        reporter.announceHeldError(resetID: "r1", settings: fixture.context.partition)
        reporter.announceHeldError(resetID: "r2", settings: fixture.context.partition)
        let errors = agent.events.log.recent().filter { $0.event == .syncError }
        #expect(errors.map(\.resetID) == ["r1"])
        #expect(errors.map(\.code) == [211])
    }
}
