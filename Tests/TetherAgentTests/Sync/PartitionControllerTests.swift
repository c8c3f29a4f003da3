import Foundation
import Logging
import Synchronization
import Testing
import TetherControl
import TetherProtocol
import TetherStore
import TetherTestSupport
@testable import TetherAgent

/// The controller as the executor of ``PartitionStateMachine``: a real store and state
/// database in a temporary directory, the server played by a ``ScriptedLink``, no process.
@Suite struct PartitionControllerTests {
    static let resetError = SyncError(.badServerVersion, "the server was restored from a backup", action: .clientReset)

    /// Runs a controller for `fixture`'s partition on `link` while `body` plays the server.
    func withController(
        _ fixture: ResetFixture, link: ScriptedLink = ScriptedLink(), agent: ScriptedAgent? = nil,
        backoff: Backoff = Backoff(initial: .milliseconds(10), maximum: .milliseconds(50)),
        _ body: (PartitionController, ScriptedLink) async throws -> Void
    ) async throws {
        let controller = PartitionController(
            settings: fixture.context.partition, context: try agent ?? ScriptedAgent(fixture),
            persisted: try fixture.stateDatabase.status(of: ResetFixture.partition), backoff: backoff)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await controller.run(on: link) }
            defer { group.cancelAll() }
            try await body(controller, link)
        }
    }

    func state(_ controller: PartitionController, is expected: PartitionState) async throws {
        try await eventually("state \(expected.rawValue)", timeout: .seconds(20)) { await controller.status.state == expected }
    }

    @Test func bindsTheStoresIdentitySyncsUploadsCommitsAndGoesOfflineWithTheConnection() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "ann", 1)])
        try await withController(fixture) { controller, link in
            let session = try await link.bind(1)
            #expect(session.request.identity == ClientFileIdentity(id: 1, salt: 1), "the store's identity, not a new device")
            #expect(session.request.lastServerVersion == ServerVersion(version: 10, salt: 1))
            #expect(await controller.status.state == .connecting)
            session.acceptKnownStore(version: 10)
            try await state(controller, is: .synced)
            try await fixture.appWrite("INSERT INTO orders (id, customer, total) VALUES ('o2', 'bob', 2)")
            try await eventually("the commit is uploaded") { !session.uploads.isEmpty }
            try await eventually("counted as unsynced") { await controller.status.unsyncedChanges == 1 }
            #expect(await controller.status.state == .syncing, "not synced while a change is unacknowledged")
            link.close()
            try await state(controller, is: .offline)
        }
    }

    /// Flow control: the controller asks for the next event only once a download is applied
    /// (committed), and each one it took is granted back to the server then.
    @Test func eachAppliedDownloadIsGrantedBack() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "ann", 1)])
        try await withController(fixture) { controller, link in
            let session = try await link.bind(1)
            session.acceptKnownStore(version: 10)
            try await state(controller, is: .synced)
            #expect(session.credit == 0, "a bound is not flow-controlled")
            for version in Int64(11)...13 {
                let change = RowChange(table: "orders", key: .text("o\(version)"), kind: .insert, fields: ["customer": .text("x"), "total": .real(1)])
                session.send(.download(Download(session: session.request.session, latestServerVersion: version, entries: [
                    DownloadEntry(serverVersion: ServerVersion(version: version, salt: 1), integratedClientSeq: 0, changeset: Changeset([change]))
                ])))
            }
            try await eventually("three downloads applied") { await controller.status.serverVersion == 13 }
            try await eventually("each granted back") { session.credit == 3 }
        }
    }

    @Test func aPauseEndsTheSessionIsRecordedAndAResumeBindsAgain() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "ann", 1)])
        try await withController(fixture) { controller, link in
            let first = try await link.bind(1)
            first.acceptKnownStore(version: 10)
            try await state(controller, is: .synced)
            try await controller.pause()
            try await state(controller, is: .paused)
            try await eventually("the session is unbound") { first.unbinds == 1 }
            #expect(try fixture.stateDatabase.status(of: ResetFixture.partition).paused)
            #expect(link.binds.count == 1, "a paused partition does not bind")
            try await controller.resume()
            #expect(try !fixture.stateDatabase.status(of: ResetFixture.partition).paused)
            let second = try await link.bind(2)
            second.acceptKnownStore(version: 10)
            try await state(controller, is: .synced)
        }
    }

    @Test func aPauseRecordedBeforeARestartKeepsThePartitionPaused() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "ann", 1)])
        try fixture.stateDatabase.update(PartitionStatusRow(name: ResetFixture.partition, paused: true))
        try await withController(fixture) { controller, link in
            #expect(await controller.status.state == .paused)
            try await controller.resume()
            _ = try await link.bind(1)
        }
    }

    /// A partition refused (206) before it ever had a store (a device enrolled before its tags
    /// grant it the partition): nothing to back up or empty, so no delete-store reset and no
    /// "client reset could not start" error; it asks again with backoff, as an emptied store does.
    @Test func permissionDeniedBeforeTheFirstBootstrapAsksAgainWithoutAReset() async throws {
        let fixture = try await ResetFixture(synced: [])
        try fixture.store.close()
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: fixture.store.path + suffix) {
            try FileManager.default.removeItem(atPath: fixture.store.path + suffix)
        }
        try await withController(fixture) { controller, link in
            let first = try await link.bind(1)
            #expect(first.request.identity == nil, "no store: a bootstrap")
            first.send(.error(SyncError(.permissionDenied, "no grant for store-17", action: .deleteStore)))
            let second = try await link.bind(2)
            #expect(second.request.identity == nil)
            #expect(try fixture.stateDatabase.resets(partition: ResetFixture.partition).isEmpty)
            #expect(await controller.status.lastError?.code == SyncErrorCode.permissionDenied.rawValue)
            let errors = fixture.log.all.filter { $0.level >= .error }.map(\.message)
            #expect(!errors.contains { $0.contains("could not start") }, "\(errors)")
        }
    }

    @Test func aResetErrorRunsTheResetThenBindsWithTheNewIdentity() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "ann", 1)])
        fixture.fetcher.serve([order("o1", "ann", 5), order("o3", "cy", 3)])
        try await withController(fixture) { controller, link in
            let first = try await link.bind(1)
            first.acceptKnownStore(version: 10)
            try await state(controller, is: .synced)
            first.send(.error(Self.resetError))
            let second = try await link.bind(2)
            #expect(second.request.identity == ClientFileIdentity(id: 101, salt: 7), "the identity the reset fetched")
            #expect(second.request.lastServerVersion == ServerVersion(version: 20, salt: 2))
            let resets = try fixture.stateDatabase.resets(partition: ResetFixture.partition)
            #expect(resets.map(\.phase) == [.done])
            #expect(resets.first?.outcome == .recovered)
            #expect(await controller.status.lastError?.code == Self.resetError.code.rawValue)
            #expect(await controller.status.pendingReset == nil)
            second.acceptKnownStore(version: 20, salt: 2)
            try await state(controller, is: .synced)
            #expect(try fixture.stateDatabase.resets(partition: ResetFixture.partition).first?.confirmedByBind == true)
        }
    }

    /// The error that starts a reset is announced once, with the reset's id, before the
    /// reset's phases; the reset's phases, outcome and the partition's states follow.
    @Test func aResetErrorIsAnnouncedWithItsResetBeforeThePhases() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "ann", 1)])
        fixture.fetcher.serve([order("o1", "ann", 5)])
        let agent = try ScriptedAgent(fixture)
        try await withController(fixture, agent: agent) { controller, link in
            let first = try await link.bind(1)
            first.acceptKnownStore(version: 10)
            try await state(controller, is: .synced)
            first.send(.error(Self.resetError))
            _ = try await link.bind(2)
            let reset = try #require(try fixture.stateDatabase.resets(partition: ResetFixture.partition).first)
            let events = agent.events.log.recent()
            let errors = events.filter { $0.event == .syncError }
            #expect(errors.count == 1)
            #expect(errors.first?.resetID == reset.id && errors.first?.code == 209 && errors.first?.action == "client_reset")
            let errorAt = try #require(events.firstIndex { $0.event == .syncError })
            let phaseAt = try #require(events.firstIndex { $0.event == .resetPhase })
            #expect(errorAt < phaseAt, "\(events.map(\.humanLine))")
            let phases = events.filter { $0.event == .resetPhase }.compactMap(\.phase)
            #expect(phases.first == "recorded" && phases.last == "done", "\(phases)")
            #expect(events.contains { $0.event == .resetOutcome && $0.outcome == "recovered" && $0.resetID == reset.id })
            let states = events.filter { $0.event == .state && $0.partition == ResetFixture.partition.rawValue }.compactMap(\.state)
            #expect(states.starts(with: ["connecting", "synced"]) && states.contains("resetting"), "\(states)")
        }
    }

    @Test func aManualResetWaitsWithItsReasonUntilInitiated() async throws {
        let fixture = try await ResetFixture(mode: .manual, synced: [order("o1", "ann", 1)])
        try await withController(fixture) { controller, link in
            let first = try await link.bind(1)
            first.acceptKnownStore(version: 10)
            try await state(controller, is: .synced)
            first.send(.error(Self.resetError))
            try await state(controller, is: .resetPending)
            let status = await controller.status
            #expect(status.pendingResetReason == "the partition's mode is manual")
            #expect(link.binds.count == 1, "nothing binds while the reset waits")
            let id = try await controller.initiate()
            #expect(id == status.pendingReset)
            let second = try await link.bind(2)
            #expect(second.request.identity == ClientFileIdentity(id: 101, salt: 7))
            #expect(try fixture.stateDatabase.resets(partition: ResetFixture.partition).first?.outcome == .manualDone)
        }
    }

    @Test func aFatalErrorStopsThePartitionUntilAReload() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "ann", 1)])
        try await withController(fixture) { controller, link in
            let first = try await link.bind(1)
            first.send(.error(SyncError(.otherSessionError, "the partition is gone", action: .fatal)))
            try await state(controller, is: .stopped)
            #expect(try fixture.stateDatabase.status(of: ResetFixture.partition).stoppedReason == "error 201: the partition is gone")
            try await consistently("no bind while stopped", for: .milliseconds(300)) { link.binds.count == 1 }
            await controller.update(fixture.context.partition)
            _ = try await link.bind(2)
        }
    }

    /// Soak seed 541356954: the connection closed while the partition opened its store; the
    /// open, interrupted by the cancellation, was taken for a store that cannot be opened and
    /// the partition stopped until a reload.
    @Test func aStepInterruptedByTheConnectionClosingDoesNotStopThePartition() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "ann", 1)])
        let agent = try ScriptedAgent(fixture)
        let controller = PartitionController(
            settings: fixture.context.partition, context: agent,
            persisted: try fixture.stateDatabase.status(of: ResetFixture.partition),
            backoff: Backoff(initial: .milliseconds(10), maximum: .milliseconds(50)))
        agent.cancelDuringNextBind()
        // In a child task: the cancellation is the run's, not the test's own.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await controller.run(on: ScriptedLink()) }  // returns: cancelled mid-step
        }
        await controller.connectionLost()
        #expect(await controller.status.state == .offline)
        #expect(await controller.machine.stopReason == nil)
        #expect(await controller.status.lastError == nil, "an interruption is not an error of the store")
        let link = ScriptedLink()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await controller.run(on: link) }
            defer { group.cancelAll() }
            let session = try await link.bind(1)
            session.acceptKnownStore(version: 10)
            try await state(controller, is: .synced)
        }
    }

    @Test func aRetryErrorBindsAgainAfterABackoff() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "ann", 1)])
        try await withController(fixture) { controller, link in
            let first = try await link.bind(1)
            first.send(.error(SyncError(.otherSessionError, "busy", action: .retry)))
            try await state(controller, is: .offline)
            let second = try await link.bind(2)
            #expect(second.request.identity == first.request.identity)
        }
    }

    /// A bind refused with 203 tells the agent which token was refused, an accepted one which
    /// was accepted (``CredentialFallback`` offers an earlier credential after a refusal).
    @Test func theAgentHearsWhichTokenTheServerRefusedAndWhichItAccepted() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "ann", 1)])
        let agent = try ScriptedAgent(fixture)
        try await withController(fixture, agent: agent) { controller, link in
            let first = try await link.bind(1)
            first.send(.error(SyncError(.badUserAuthentication, "not accepted", action: .reauth)))
            try await state(controller, is: .offline)
            let second = try await link.bind(2)
            second.acceptKnownStore(version: 10)
            try await state(controller, is: .synced)
            #expect(agent.credentialAnswers.withLock { $0 } == ["refused t0ken", "accepted t0ken"])
        }
    }

    /// `retry-now`: a backoff of minutes ends at once; a partition that is not backing off is
    /// left alone (no wake kept for later).
    @Test func retryNowEndsTheBackoffBeforeTheNextBind() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "ann", 1)])
        try await withController(fixture, backoff: Backoff(initial: .seconds(600), maximum: .seconds(600))) { controller, link in
            let first = try await link.bind(1)
            #expect(await controller.retryNow() == false, "in a session: nothing to retry")
            first.send(.error(SyncError(.otherSessionError, "busy", action: .retry)))
            try await eventually("backing off", timeout: .seconds(20)) { await controller.retryNow() }
            let second = try await link.bind(2)  // within 20 s, not 7 to 10 minutes
            #expect(second.request.identity == first.request.identity)
        }
    }

    @Test func aDamagedStoreIsQuarantinedThroughTheResetCoordinatorThenBootstrapped() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "ann", 1)])
        try fixture.store.close()
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: fixture.store.path + suffix) }
        try "this is not a database, not even close to one".write(toFile: fixture.store.path, atomically: false, encoding: .utf8)
        try await withController(fixture) { controller, link in
            let first = try await link.bind(1)
            #expect(first.request.identity == nil, "bound as a new device once the damaged store is moved aside")
            let records = try fixture.stateDatabase.resets(partition: ResetFixture.partition)
            #expect(records.count == 1)
            let record = try #require(records.first)
            #expect(record.isQuarantine)
            #expect(record.phase == .done)
            #expect(record.outcome == .discarded)
            #expect(FileManager.default.fileExists(atPath: record.backupPath), "the damaged file is kept")
            #expect(!FileManager.default.fileExists(atPath: fixture.store.path))
            #expect(await controller.status.lastError?.code == SyncErrorCode.badClientFile.rawValue)
        }
    }
}
