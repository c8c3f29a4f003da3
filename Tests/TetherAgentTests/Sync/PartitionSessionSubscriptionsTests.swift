import Foundation
import Testing
import TetherControl
import TetherProtocol
import TetherStore
import TetherTestSupport
@testable import TetherAgent

/// A bound session's subscription chunks and compensating writes (protocol 9), through a
/// controller on a real store with the server played by a ``ScriptedLink``.
@Suite struct PartitionSessionSubscriptionsTests {
    static let ann = try! SubscriptionSet([Subscription(table: "orders", filter: "customer = 'ann'")])

    private func withController(
        _ fixture: ResetFixture, wanting wanted: SubscriptionSet?, _ body: (PartitionController, ScriptedLink, ScriptedAgent) async throws -> Void
    ) async throws {
        var settings = fixture.context.partition
        settings.subscriptions = wanted
        let agent = try ScriptedAgent(fixture)
        let link = ScriptedLink()
        let controller = PartitionController(
            settings: settings, context: agent, persisted: try fixture.stateDatabase.status(of: ResetFixture.partition),
            backoff: Backoff(initial: .milliseconds(10), maximum: .milliseconds(50)))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await controller.run(on: link) }
            defer { group.cancelAll() }
            try await body(controller, link, agent)
        }
    }

    private static func row(_ id: String, _ customer: String) -> RowChange {
        RowChange(table: "orders", key: .text(id), kind: .insert, fields: ["customer": .text(customer), "total": .real(1), "note": .null])
    }

    @Test func aChangedSetIsAppliedChunkByChunkAndThePartitionIsSyncedAfterTheLast() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "bob", 1), order("o2", "ann", 2)])
        try await withController(fixture, wanting: Self.ann) { controller, link, agent in
            let session = try await link.bind(1)
            #expect(session.request.subscriptions == SubscriptionRequest(held: nil, wanted: Self.ann))
            session.acceptKnownStore(version: 10)
            try await eventually("the session is ready") { await controller.machine.sessionReady }
            #expect(await controller.status.subscriptionsPending)
            #expect(await controller.status.state == .syncing, "not synced while the store holds another set")
            let version = ServerVersion(version: 10, salt: 1)
            session.send(.subscriptionChunk(SubscriptionChunk(
                session: session.request.session, serverVersion: version, setDigest: Self.ann.digest, isLast: false,
                changes: ChangeRows(Changeset([Self.row("o3", "ann")])))))
            session.send(.subscriptionChunk(SubscriptionChunk(
                session: session.request.session, serverVersion: version, setDigest: Self.ann.digest, isLast: true,
                changes: ChangeRows(Changeset([RowChange(table: "orders", key: .text("o1"), kind: .delete)])))))
            try await eventually("synced once the last chunk is applied", timeout: .seconds(20)) { await controller.status.state == .synced }
            #expect(try await fixture.store.heldSubscriptions() == Self.ann)
            let dump = try await fixture.store.canonicalDump()
            #expect(!dump.contains("\"o1\"") && dump.contains("\"o2\"") && dump.contains("\"o3\""), "\(dump)")
            #expect(try await fixture.store.pendingChangeCount() == 0, "nothing captured")
            #expect(await controller.status.serverVersion == 10)
            try await eventually("each chunk granted back") { session.credit == 2 }
            #expect(fixture.log.all.contains { $0.message.contains("subscriptions of store-17 in effect") })
            _ = agent
        }
    }

    @Test func aChunkForAnotherSetEndsTheSessionAndTheNextBindAsksAgain() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "bob", 1)])
        try await withController(fixture, wanting: Self.ann) { controller, link, _ in
            let first = try await link.bind(1)
            first.acceptKnownStore(version: 10)
            first.send(.subscriptionChunk(SubscriptionChunk(
                session: first.request.session, serverVersion: ServerVersion(version: 10, salt: 1), setDigest: 12345, isLast: true,
                changes: ChangeRows(Changeset([RowChange(table: "orders", key: .text("o1"), kind: .delete)])))))
            let second = try await link.bind(2)
            #expect(second.request.subscriptions == SubscriptionRequest(held: nil, wanted: Self.ann), "the store still holds the old set")
            #expect(try await fixture.store.canonicalDump().contains("\"o1\""), "nothing of the refused chunk")
        }
    }

    @Test func compensatingWritesAreRecordedOncePerVersion() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "bob", 1)])
        try await withController(fixture, wanting: nil) { controller, link, agent in
            let session = try await link.bind(1)
            session.acceptKnownStore(version: 10)
            try await eventually("synced") { await controller.status.state == .synced }
            let write = CompensatingWrite(
                table: "orders", key: .text("o1"), reason: .outsideSubscriptions, message: "orders row is outside the subscriptions")
            let notice = CompensatingWrites(session: session.request.session, serverVersion: ServerVersion(version: 11, salt: 1), writes: [write])
            session.send(.compensatingWrites(notice))
            try await eventually("counted") { await controller.status.compensatingWrites == 1 }
            // The download that carries the revert, then the same notice again (a resend): ignored.
            session.send(.download(Download(session: session.request.session, latestServerVersion: 11, entries: [
                DownloadEntry(serverVersion: ServerVersion(version: 11, salt: 1), integratedClientSeq: 0, changeset: Changeset([Self.row("o1", "bob")]))
            ])))
            try await eventually("the revert applied") { await controller.status.serverVersion == 11 }
            session.send(.compensatingWrites(notice))
            session.send(.download(Download(session: session.request.session, latestServerVersion: 12, entries: [
                DownloadEntry(serverVersion: ServerVersion(version: 12, salt: 1), integratedClientSeq: 0, changeset: Changeset([]))
            ])))
            try await eventually("the next download applied") { await controller.status.serverVersion == 12 }
            let status = await controller.status
            #expect(status.compensatingWrites == 1)
            #expect(status.lastCompensatingWrite?.table == "orders" && status.lastCompensatingWrite?.key == "o1")
            #expect(status.lastCompensatingWrite?.reason == "outside_subscriptions")
            #expect(status.report.compensatingWrites == 1)
            let events = agent.events.log.recent().filter { $0.event == .compensatingWrite }
            #expect(events.count == 1)
            let event = try #require(events.first)
            #expect(event.partition == "store-17" && event.table == "orders" && event.key == "o1" && event.reason == "outside_subscriptions")
            #expect(event.code == 231 && event.serverVersion == 11)
            let warnings = fixture.log.all.filter { $0.message.contains("reverted by the server") }
            #expect(warnings.count == 1)
            #expect(warnings.first?.metadata["tether.error_code"] == "231" && warnings.first?.metadata["tether.key"] == "o1")
            #expect(status.state == .synced, "sync goes on")
        }
    }

    /// A reload that changes the subscriptions binds the partition again, without a reset; one
    /// that changes nothing of them keeps the session.
    @Test func aReloadThatChangesTheSubscriptionsBindsAgain() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "bob", 1)])
        try await withController(fixture, wanting: nil) { controller, link, _ in
            let first = try await link.bind(1)
            first.acceptKnownStore(version: 10)
            try await eventually("synced") { await controller.status.state == .synced }
            var settings = await controller.settings
            await controller.update(settings)
            settings.subscriptions = Self.ann
            await controller.update(settings)
            let second = try await link.bind(2)
            #expect(first.unbinds == 1)
            #expect(second.request.subscriptions == SubscriptionRequest(held: nil, wanted: Self.ann))
            #expect(second.request.identity == ClientFileIdentity(id: 1, salt: 1), "the same store: no reset")
            #expect(try fixture.stateDatabase.resets(partition: ResetFixture.partition).isEmpty)
            let notices = fixture.log.all.filter { $0.message.hasPrefix("subscriptions of store-17 changed") }.map(\.message)
            #expect(notices == ["subscriptions of store-17 changed (digest whole → \(Self.ann.digestText))"], "\(notices)")
            #expect(link.binds.count == 2, "the unchanged reload did not bind again")
        }
    }

    /// `tetherctl subscriptions`: the set held and the set configured, from the open store or
    /// the file, and whether a change is pending.
    @Test func theSubscriptionsReportShowsBothSetsAndAPendingChange() async throws {
        let fixture = try await ResetFixture(synced: [order("o1", "bob", 1)])
        var settings = fixture.context.partition
        settings.subscriptions = Self.ann
        let controller = PartitionController(
            settings: settings, context: try ScriptedAgent(fixture), persisted: try fixture.stateDatabase.status(of: ResetFixture.partition),
            backoff: Backoff(initial: .milliseconds(10), maximum: .milliseconds(50)))
        let pending = try await controller.subscriptionsReport(configured: Self.ann, runtime: false)
        #expect(pending == SubscriptionsReport(
            partition: "store-17", hasStore: true, held: nil, heldDigest: "whole", wanted: ["orders WHERE customer = 'ann'"],
            wantedDigest: Self.ann.digestText, changePending: true, runtime: false, configured: ["orders WHERE customer = 'ann'"],
            configuredDigest: Self.ann.digestText))
        try await fixture.store.recordSubscriptions(Self.ann)
        let done = try await controller.subscriptionsReport(configured: Self.ann, runtime: false)
        #expect(done.held == ["orders WHERE customer = 'ann'"] && done.heldDigest == Self.ann.digestText && !done.changePending)
        let value = try JSONValue(encoding: pending)
        #expect(value["held"] == .null, "null, not left out")
    }

    @Test func theErrorHookIsToldTheRowAndTheReason() {
        var report = SyncErrorReport(
            partition: "store-17", store: "/s.sqlite", code: 231, name: "compensating_write", message: "m", action: "retry")
        #expect(HookInvocation.environment(forError: report, repeats: 0, serverURL: "ws://h/sync")["TETHER_TABLE"] == "")
        report.compensation = .init(table: "orders", key: "o1", reason: "write_rule")
        let environment = HookInvocation.environment(forError: report, repeats: 0, serverURL: "ws://h/sync")
        #expect(environment["TETHER_ERROR_CODE"] == "231")
        #expect(environment["TETHER_TABLE"] == "orders" && environment["TETHER_KEY"] == "o1" && environment["TETHER_REASON"] == "write_rule")
    }
}
