import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Bugs the fault campaign found, each replayed deterministically and named after the seed
/// that found it (`TETHER_CAMPAIGN_SEED` replays the campaign's choices).
@Suite(.serialized, .timeLimit(.minutes(5)))
struct CampaignRegressionTests {
    /// Seed 3: an agent restarted while its disk was full could not open its stores (SQLite
    /// error 4874: the `-shm` file could not grow) and stopped those partitions for good; the
    /// operator's `reset initiate` then left them `resetting`. A full disk passes: the open is
    /// retried with backoff and sync resumes once there is room, with nothing lost.
    @Test func seed3AnAgentStartedOnAFullDiskSyncsOnceThereIsRoom() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"])
            let disk = try await SmallDisk.mount(at: a.dir + "/state", megabytes: 16)
            defer { disk.unmount() }
            try await a.start()
            try await b.start()
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('x', 'before', 1)")
            try await a.waitSynced("p")
            await a.stop(SIGKILL)
            // The application writes while the agent is down, then closes: its connection was
            // the last, so SQLite removes the -wal and -shm files, which the agent must create.
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('y', 'offline', 2)")
            disk.fill()
            try await a.start()
            try await eventually("the open failed and is retried", timeout: .seconds(30)) {
                a.log.contains("cannot open the store") && a.log.contains("retrying")
            }
            #expect(try await a.status("p")?["state"]?.stringValue != "stopped")
            disk.free()
            try await a.waitSynced("p", timeout: 90)
            try await b.waitSynced("p")
            #expect(try await b.rows("p") == "x|before|1.0|-\ny|offline|2.0|-\n", "the offline write reached the other agent")
            await a.stop(SIGKILL)
        }
    }

    /// Seed 22342494: `tetherctl resume` on an agent whose disk was full answered "resumed",
    /// but the pause stayed recorded in `state.sqlite`, so the next start paused the partition
    /// again — silently, for good. A pause or resume that cannot be recorded is now refused
    /// with the reason, and changes nothing.
    @Test func seed22342494AResumeThatCannotBeRecordedIsRefusedNotForgotten() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let disk = try await SmallDisk.mount(at: a.dir + "/state", megabytes: 16)
            defer { disk.unmount() }
            try await a.start()
            try await a.waitSynced("p")
            #expect(try await a.ctl(["pause", "p"]).status == 0)
            disk.fill()
            let refused = try await a.ctl(["resume", "p"])
            #expect(refused.status == 1)
            #expect(refused.standardError.contains("cannot resume p"), "\(refused)")
            #expect(try await a.status("p")?["state"]?.stringValue == "paused", "a refused resume changes nothing")
            disk.free()
            #expect(try await a.ctl(["resume", "p"]).status == 0)
            await a.stop(SIGKILL)
            try await a.start()
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('x', 'after', 1)")
            try await a.waitSynced("p")
            #expect(try await a.status("p")?["state"]?.stringValue == "synced", "the resume outlived the restart")
            await a.stop(SIGKILL)
        }
    }

    /// Seed 937792179: `tetherctl resume` of a partition that was not paused (an operator
    /// resuming twice) set its state to `connecting` while its session went on, so the
    /// partition reported `connecting` for ever and `wait-synced` never returned.
    @Test func seed937792179ResumingAPartitionThatIsNotPausedChangesNothing() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            #expect(try await a.ctl(["pause", "p"]).status == 0)
            #expect(try await a.ctl(["resume", "p"]).status == 0)
            #expect(try await a.ctl(["resume", "p"]).status == 0, "a second resume is not an error")
            try await a.waitSynced("p")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('x', 'after', 1)")
            try await a.waitSynced("p")
            #expect(try await a.status("p")?["state"]?.stringValue == "synced")
            await a.stop(SIGKILL)
        }
    }
}
