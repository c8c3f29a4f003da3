import Foundation
import Testing
import TetherAgent
import TetherProtocol

@Suite struct AgentMetricsTests {
    static func status(_ name: String, _ state: PartitionState, unsynced: Int = 0, version: Int64 = 0) -> PartitionStatus {
        var status = PartitionStatus(name: PartitionName(name)!, state: state)
        status.unsyncedChanges = unsynced
        status.serverVersion = version
        status.latestServerVersion = version
        return status
    }

    static func reset(_ partition: String, _ outcome: ResetOutcome, hooks: [ResetRecord.HookRun] = []) -> ResetRecord {
        var record = ResetRecord(
            id: UUID().uuidString, partition: PartitionName(partition)!, error: SyncError(SyncErrorCode(222), "secret row contents"),
            mode: .recoverUnsyncedChanges, strategy: .recover, backupPath: "/b", startedAt: 1)
        record.outcome = outcome
        record.hooks = hooks
        return record
    }

    /// The value of the sample whose line starts with `series ` (name and labels as written).
    static func value(_ text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    @Test func partitionGaugesFollowTheStatuses() {
        let metrics = AgentMetrics()
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let text = metrics.exposition(.init(
            statuses: [Self.status("a", .synced, version: 7), Self.status("b", .offline, unsynced: 3, version: 2)], resets: [], now: now))
        #expect(Self.value(text, #"tether_agent_partition_state{partition="a",state="synced"}"#) == 1)
        #expect(Self.value(text, #"tether_agent_partition_state{partition="a",state="offline"}"#) == 0)
        #expect(Self.value(text, #"tether_agent_partition_state{partition="b",state="offline"}"#) == 1)
        #expect(Self.value(text, #"tether_agent_unsynced_changes{partition="b"}"#) == 3)
        #expect(Self.value(text, #"tether_agent_server_version{partition="a"}"#) == 7)
        #expect(Self.value(text, #"tether_agent_last_synced_timestamp_seconds{partition="a"}"#) == 1_700_000_000)
        #expect(Self.value(text, #"tether_agent_last_synced_timestamp_seconds{partition="b"}"#) == 0)
        #expect(Self.value(text, "tether_agent_connected") == 0)
        #expect(Self.value(text, "tether_agent_reconnects_total") == 0)
        #expect(text.contains("# TYPE tether_agent_partition_state gauge"))
        #expect(text.contains("# TYPE tether_agent_resets_total counter"))

        // b goes offline → synced later: its timestamp moves, a's stays where it was last seen synced.
        let later = now.addingTimeInterval(60)
        let next = metrics.exposition(.init(
            statuses: [Self.status("a", .offline, version: 7), Self.status("b", .synced, version: 3)], resets: [], now: later))
        #expect(Self.value(next, #"tether_agent_last_synced_timestamp_seconds{partition="a"}"#) == 1_700_000_000)
        #expect(Self.value(next, #"tether_agent_last_synced_timestamp_seconds{partition="b"}"#) == 1_700_000_060)
    }

    @Test func resetsAndHooksAreCountedFromTheRecordsOfConfiguredPartitions() {
        let metrics = AgentMetrics()
        let failed = ResetRecord.HookRun(event: .beforeReset, result: .failed(exitStatus: 3), finishedAt: 2)
        let ok = ResetRecord.HookRun(event: .afterReset, result: .succeeded, finishedAt: 3)
        let text = metrics.exposition(.init(
            statuses: [Self.status("a", .synced)],
            resets: [
                Self.reset("a", .recovered, hooks: [ok]), Self.reset("a", .recovered), Self.reset("a", .manualPending, hooks: [failed]),
                Self.reset("gone", .discarded, hooks: [ok]),
            ],
            now: Date()))
        #expect(Self.value(text, #"tether_agent_resets_total{partition="a",outcome="recovered"}"#) == 2)
        #expect(Self.value(text, #"tether_agent_resets_total{partition="a",outcome="manual-pending"}"#) == 1)
        #expect(Self.value(text, #"tether_agent_resets_total{partition="a",outcome="discarded"}"#) == 0)
        #expect(Self.value(text, #"tether_agent_hook_runs_total{hook="after-reset",result="succeeded"}"#) == 1, "not the removed partition's")
        #expect(Self.value(text, #"tether_agent_hook_runs_total{hook="before-reset",result="failed"}"#) == 1)
        #expect(!text.contains("gone"), "labels are bounded by the configuration")
        #expect(!text.contains("secret"), "no error messages or row contents")
    }
}
