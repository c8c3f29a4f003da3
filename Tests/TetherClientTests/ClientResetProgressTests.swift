import Testing
import TetherClient

/// ``ClientResetProgress`` from the events of a reset: its start, its backup (the path only once
/// the backup exists), and nothing from other events.
@Suite struct ClientResetProgressTests {
    @Test func progressCarriesTheBackupPathOnlyOnceTheBackupExists() throws {
        let started = try #require(ClientResetProgress(AgentEvent(
            .resetPhase, partition: "p", message: "discard", resetID: "r", phase: "recorded", storePath: "/s", backupPath: "/b")))
        #expect(started.isStart && started.backupPath == nil && started.strategy == .discard)
        let ready = try #require(ClientResetProgress(AgentEvent(
            .resetBackup, partition: "p", message: "discard", resetID: "r", phase: "backing-up", storePath: "/s", backupPath: "/b")))
        #expect(ready.isBackupReady && ready.backupPath == "/b" && !ready.isStart)
        let later = try #require(ClientResetProgress(AgentEvent(.resetPhase, partition: "p", resetID: "r", phase: "fetching", backupPath: "/b")))
        #expect(later.backupPath == "/b")
        #expect(ClientResetProgress(AgentEvent(.resetOutcome, partition: "p", resetID: "r", outcome: "discarded")) == nil)
    }
}
