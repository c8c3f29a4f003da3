import Foundation
import Testing
import TetherClient
import TetherTestSupport

/// `TetherClient` starts what an operator would (issue 49): a manual reset, heard as it starts,
/// waits, has its backup (the path given as soon as the file exists, before the reset touches
/// the store) and finishes; and "retry now", which ends the agent's reconnect backoff.
@Suite(.timeLimit(.minutes(5)))
struct ClientLibraryResetEndToEndTests {
    @Test func anApplicationInitiatesAManualResetAndHearsItsBackup() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let b = try cluster.agent("b", partitions: ["p"], extra: "[reset]\nmode = \"manual\"")
            try await a.start()
            try await b.start()
            try await a.waitSynced("p")
            try await b.waitSynced("p")
            let tether = TetherClient(socketPath: b.socket, timeout: .seconds(10))
            let hello = try await tether.hello()
            #expect(hello.capabilities.contains("retry-now") && hello.capabilities.contains("reset-backup"))
            // Nothing waits for an operator yet: a refusal, not a reset.
            await #expect(throws: TetherClientError.self) { try await tether.initiateReset(partition: "nope") }

            let heard = Heard()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await tether.onResetProgress(after: hello.lastEventSeq) { progress in
                        // The backup exists when the application hears of it.
                        let exists = progress.backupPath.map { FileManager.default.fileExists(atPath: $0) } ?? false
                        await heard.add(progress, backupExisted: exists)
                    }
                }
                group.addTask {
                    try await tether.onClientReset(after: hello.lastEventSeq) { notice in await heard.finished(notice) }
                }
                // The server restored behind b's store: 211, and b's manual reset waits.
                let snapshot = try await cluster.admin(["snapshot", "p"])
                try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('late', 'l', 4)")
                try await a.waitSynced("p")
                try await b.waitSynced("p")
                try await cluster.admin(["restore", "p", snapshot, "--rollback"])
                let start = try await eventually("the reset's start", timeout: .seconds(60)) { await heard.progress.first { $0.isStart } }
                #expect(start.strategy == .manual && start.code == 211 && start.backupPath == nil, "\(start.event)")
                _ = try await eventually("the wait for an operator", timeout: .seconds(60)) {
                    await heard.progress.first { $0.phase == .manualPending }
                }
                let status = try await tether.status()
                #expect(status.partitions.first?.partitionState == .resetPending)

                let initiated = try await tether.initiateReset(partition: "p")
                #expect(initiated.id == start.resetID && initiated.outcome == "initiated", "\(initiated)")
                let ready = try await eventually("the backup", timeout: .seconds(60)) { await heard.progress.first { $0.isBackupReady } }
                #expect(ready.resetID == start.resetID && ready.storePath == b.store("p"))
                #expect(await heard.backupExisted[ready.event.seq] == true, "the backup file existed when the event came")
                let notice = try await eventually("the finished reset", timeout: .seconds(60)) { await heard.notices.first }
                #expect(notice.resetOutcome == .manualDone && notice.before == ready.backupPath)
                #expect(ready.event.seq < notice.event.seq)
                group.cancelAll()
            }
        }
    }

    @Test func retryNowEndsTheReconnectBackoff() async throws {
        try await withCluster { cluster in
            let b = try await cluster.syncedAgents(["b"])[0]
            let tether = TetherClient(socketPath: b.socket, timeout: .seconds(10))
            // Connected and synced: nothing backs off.
            let idle = try await tether.retryNow()
            #expect(!idle.connection && idle.partitions.isEmpty, "\(idle)")
            let printed = try await b.ctl(["retry"])
            #expect(printed.status == 0, "\(printed)")
            #expect(printed.standardOutput.contains("the connection was not backing off; no partition was backing off"), "\(printed)")
            await #expect(throws: TetherClientError.self) { try await tether.retryNow(partition: "nope") }
            // The server goes away: the agent backs off between attempts, and retry-now ends that.
            await cluster.stopServer()
            try await eventually("a backoff to end", timeout: .seconds(60), pollInterval: .milliseconds(100)) {
                (try? await tether.retryNow())?.connection == true
            }
            try await cluster.startServer()
            _ = try? await tether.retryNow()
            try await b.waitSynced("p")
        }
    }
}

/// What the application heard.
private actor Heard {
    var progress: [ClientResetProgress] = []
    var backupExisted: [UInt64: Bool] = [:]
    var notices: [ClientResetNotice] = []

    func add(_ progress: ClientResetProgress, backupExisted: Bool) {
        self.progress.append(progress)
        self.backupExisted[progress.event.seq] = backupExisted
    }

    func finished(_ notice: ClientResetNotice) { notices.append(notice) }
}
