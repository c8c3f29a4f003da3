import Foundation
import Logging
import TetherControl
import Synchronization
import Testing
import TetherAgent
import TetherProtocol
import TetherStore
import TetherTestSupport

/// The healing phase of a reset caused by a restored server (211 or 208), with a fake
/// ``HealContributor``: what it is sent, and how the reset goes on after each answer.
private let synced = [order("a", "alice", 1), order("b", "bob", 2), order("c", "carol", 3), order("d", "dave", 4)]
/// The restored server: a.total and d.customer differ from the view, b is missing, e is new.
private let server = [order("a", "alice", 10), order("c", "carol", 3), order("d", "DAVE", 4), order("e", "erin", 5)]
private let restored = SyncError(.divergingHistories, "the partition was restored to an earlier point")

private func keys(_ rows: ChangeRows) -> [String] {
    rows.changeset.changes.map { change in
        switch change.key {
        case .text(let key): "\(change.kind.rawValue) \(key)"
        case .integer(let key): "\(change.kind.rawValue) \(key)"
        }
    }.sorted()
}

@Test func theViewIsOfferedWithTheResetIdAndItsCountIsRecordedAndReported() async throws {
    let fixture = try await ResetFixture(synced: synced, hooks: [.afterReset: 0])
    try await fixture.appWrite("UPDATE orders SET total = 7 WHERE id = 'c'; INSERT INTO orders (id, customer, total) VALUES ('f', 'frank', 6);")
    fixture.fetcher.serve(server)
    fixture.healer.answer(.success(.contributed(healed: 3)))
    let record = try await fixture.executor().begin(error: restored, store: fixture.store, context: fixture.context)

    #expect(record.outcome == .recovered)
    #expect(record.healedChanges == 3)
    let sent = try #require(fixture.healer.contributions.first)
    #expect(fixture.healer.contributions.count == 1)
    #expect(sent.id == UInt64(record.id, radix: 16))
    #expect(sent.partition == ResetFixture.partition)
    #expect(sent.view == ServerVersion(version: 10, salt: 1), "the backup's synced version")
    #expect(sent.base == ServerVersion(version: 20, salt: 2), "the fetched state's")
    // f was inserted unsynced: unknown. c was only updated, and this reset replays its
    // update; the server holds c with the same values in every other column: c is not sent
    // (the replay writes its total). a and d differ, b is gone from the server, e is not in
    // the view.
    #expect(sent.chunks.flatMap { keys($0.unknown) } == ["delete f"])
    #expect(sent.chunks.flatMap { keys($0.rows) } == ["delete e", "insert a", "insert b", "insert d"])
    #expect(fixture.hookEnvironment(.afterReset)?["TETHER_HEALED_CHANGES"] == "3")
    #expect(try fixture.stateDatabase.resets().last?.healedChanges == 3)
    #expect(record.report.healedChanges == 3)
    let notices = fixture.log.all.filter { $0.message.contains("healing") }.map(\.message)
    #expect(notices == [
        "client reset \(record.id): view at server version 10 contributed to healing the restored server: 3 changes healed",
        "client reset \(record.id): server state caught up from version 20 to 21 after healing",
    ])
    #expect(!notices.joined().contains("alice"), "no row contents in the log")
}

/// A reset that discards the unsynced changes does not vouch for a row it updated: its
/// current value holds a change that is discarded.
@Test func aDiscardingResetSendsTheRowsItUpdatedAsUnknown() async throws {
    let fixture = try await ResetFixture(mode: .discardUnsyncedChanges, synced: synced)
    try await fixture.appWrite("UPDATE orders SET total = 7 WHERE id = 'c'; INSERT INTO orders (id, customer, total) VALUES ('f', 'frank', 6);")
    fixture.fetcher.serve(server)
    fixture.healer.answer(.success(.contributed(healed: 3)))
    let record = try await fixture.executor().begin(error: restored, store: fixture.store, context: fixture.context)
    #expect(record.outcome == .discarded)
    let sent = try #require(fixture.healer.contributions.first)
    #expect(sent.chunks.flatMap { keys($0.unknown) } == ["delete c", "delete f"])
    #expect(sent.chunks.flatMap { keys($0.rows) } == ["delete e", "insert a", "insert b", "insert d"])
}

/// Not wanted (the server says no heal wants the view) or refused (the server could not say:
/// access revoked between the restore and the offer), nothing is healed and the reset goes on.
/// Only the first is an answer that no view can bring back a row the server lacks: recovery
/// then drops the device's update and delete of such rows by rule 2. Refused, it keeps them
/// (the server ignores them if no view brings the rows back).
@Test(arguments: [
    (Result<HealContributionResult, HealContributionError>.success(.notWanted(reason: "no heal is open")), false),
    (.failure(.refused("error 206 (permission_denied): no grant gives the user the partition")), true),
    (.failure(.refused("error 225 (schema_misfit): column gone")), true),
])
func aViewNotWantedOrRefusedProceedsWithNothingHealed(answer: Result<HealContributionResult, HealContributionError>, keeps: Bool) async throws {
    let fixture = try await ResetFixture(synced: synced, hooks: [.afterReset: 0])
    // b is gone from the restored server: an update of it and a delete of it (by key) offline.
    try await fixture.appWrite("UPDATE orders SET total = 20 WHERE id = 'b'")
    fixture.fetcher.serve(server)
    fixture.healer.answer(answer)
    let record = try await fixture.executor().begin(error: restored, store: fixture.store, context: fixture.context)
    #expect(record.outcome == .recovered)
    #expect(record.healedChanges == 0)
    #expect(record.viewContributed == keeps)
    #expect(record.droppedChanges == (keeps ? 0 : 1), "the update of b, a row the server lacks")
    #expect(try await fixture.store.pendingChangeCount() == (keeps ? 1 : 0))
    #expect(fixture.healer.contributions.count == 1)
    #expect(fixture.fetcher.fetches == 1)
    #expect(fixture.hookEnvironment(.afterReset)?["TETHER_HEALED_CHANGES"] == "0")
    #expect(fixture.log.all.contains { $0.level == .notice && $0.message.contains("0 changes healed") })
}

/// Declined as covered, the heal is still open: the reset contributes nothing, fetches once,
/// and its recovery keeps changes of rows the server lacks (``ResetRecord/viewContributed``).
@Test func aCoveredViewKeepsTheChangesOfRowsTheServerLacks() async throws {
    let fixture = try await ResetFixture(synced: synced)
    fixture.fetcher.serve(server)
    fixture.healer.answer(.success(.covered(reason: "newer views cover it")))
    let record = try await fixture.executor().begin(error: restored, store: fixture.store, context: fixture.context)
    #expect(record.outcome == .recovered)
    #expect(record.healedChanges == 0 && record.viewContributed == true)
    #expect(fixture.fetcher.fetches == 1)
    #expect(fixture.log.all.contains { $0.message.hasSuffix("the heal is open, so changes of rows the server lacks are kept") })
}

@Test func aRebaseFetchesTheStateAgainAndContributesAgainWithTheSameId() async throws {
    let fixture = try await ResetFixture(synced: synced)
    fixture.fetcher.serve(server)
    fixture.healer.answer(.success(.rebase(reason: "another view was healed")), .success(.contributed(healed: 1)))
    let record = try await fixture.executor().begin(error: restored, store: fixture.store, context: fixture.context)
    #expect(record.outcome == .recovered)
    #expect(record.healedChanges == 1)
    // Fetched, fetched again for the rebase, then caught up after the view healed a row.
    #expect(fixture.fetcher.fetches == 2)
    #expect(fixture.fetcher.catchUps == 1)
    let sent = fixture.healer.contributions
    #expect(sent.count == 2)
    #expect(Set(sent.map(\.id)) == [UInt64(record.id, radix: 16)!])
    #expect(sent[0].chunks == sent[1].chunks, "the same view against the same state")
}

@Test func aTransientFailureRetriesTheHealingPhase() async throws {
    let fixture = try await ResetFixture(synced: synced)
    fixture.fetcher.serve(server)
    fixture.healer.answer(.failure(.transient("server unreachable")), .failure(.transient("connection cut")), .success(.contributed(healed: 2)))
    let pauses = Mutex(0)
    let record = try await fixture.executor(pause: { _ in pauses.withLock { $0 += 1 } })
        .begin(error: restored, store: fixture.store, context: fixture.context)
    #expect(record.healedChanges == 2)
    #expect(pauses.withLock { $0 } == 2)
    #expect(fixture.healer.contributions.count == 3)
    #expect(fixture.fetcher.fetches == 1, "the fetched state is kept between attempts")
    #expect(fixture.fetcher.catchUps == 1, "and caught up once the view healed rows")
}

/// After the view healed rows, the staging copy is caught up with the server's history (the
/// healed rows among it) instead of downloaded whole again: the rewritten store holds what the
/// server holds after the heal, the unsynced change replayed on top.
@Test func afterAHealTheStateIsCaughtUpNotFetchedAgain() async throws {
    let fixture = try await ResetFixture(synced: synced)
    try await fixture.appWrite("UPDATE orders SET total = 7 WHERE id = 'c'")
    fixture.fetcher.serve(server)
    fixture.healer.answer(.success(.contributed(healed: 1)))
    // What the server holds once b came back from the view (served to the catch-up).
    fixture.fetcher.onFetch { fixture.fetcher.serve(server + [order("b", "bob", 2)]) }
    let record = try await fixture.executor().begin(error: restored, store: fixture.store, context: fixture.context)
    #expect(record.outcome == .recovered)
    #expect((fixture.fetcher.fetches, fixture.fetcher.catchUps) == (1, 1))
    #expect(record.resultServerVersion == 21, "the caught-up version, one after the fetched 20")
    let rows = try await ChildProcess.run("/usr/bin/sqlite3", [fixture.store.path, "SELECT id, total FROM orders ORDER BY id"]).standardOutput
    #expect(rows == "a|10.0\nb|2.0\nc|7.0\nd|4.0\ne|5.0\n", "b healed, c's unsynced update replayed")
    #expect(fixture.log.all.contains { $0.message.contains("server state caught up from version 20 to 21 after healing") })
}

/// A server that cannot continue the staging copy (identity refused, history compacted):
/// the state is fetched whole, as before catch-ups existed.
@Test func aCatchUpTheServerCannotServeFallsBackToAWholeFetch() async throws {
    let fixture = try await ResetFixture(synced: synced)
    fixture.fetcher.serve(server)
    fixture.fetcher.refuseCatchUps("the history was compacted past the staging copy")
    fixture.healer.answer(.success(.contributed(healed: 1)))
    let record = try await fixture.executor().begin(error: restored, store: fixture.store, context: fixture.context)
    #expect(record.outcome == .recovered)
    #expect((fixture.fetcher.fetches, fixture.fetcher.catchUps) == (2, 1))
    #expect(fixture.healer.contributions.count == 1, "the view is not offered twice")
    #expect(fixture.log.all.contains { $0.message.contains("fetched again whole after healing: the history was compacted") })
}

/// A restart during healing (the daemon stops while it waits to retry) resumes in healing:
/// the same contribution is sent again, against the state fetched before the restart.
@Test func aResetResumesAtHealingAfterARestartAndContributesAgain() async throws {
    let fixture = try await ResetFixture(synced: synced)
    fixture.fetcher.serve(server)
    fixture.healer.answer(.failure(.transient("server killed")))
    let stopping = fixture.executor(pause: { _ in throw CancellationError() })
    await #expect(throws: CancellationError.self) {
        _ = try await stopping.begin(error: restored, store: fixture.store, context: fixture.context)
    }
    let persisted = try #require(try fixture.stateDatabase.activeReset(partition: ResetFixture.partition))
    #expect(persisted.phase == .healing)
    fixture.healer.answer(.success(.contributed(healed: 4)))
    let record = try await fixture.executor().drive(persisted, store: fixture.store, context: fixture.context)
    #expect(record.outcome == .recovered)
    #expect(record.healedChanges == 4)
    #expect(fixture.fetcher.fetches == 1, "the state fetched before the restart")
    #expect(fixture.fetcher.catchUps == 1, "caught up after the view healed rows")
    #expect(fixture.healer.contributions.map(\.id) == Array(repeating: UInt64(record.id, radix: 16)!, count: 2))
}

/// Resets that are not caused by a restored server, and delete-store actions, never offer a view.
@Test func onlyResetsCausedByARestoreHeal() async throws {
    let fixture = try await ResetFixture(synced: synced)
    fixture.fetcher.serve(server)
    let record = try await fixture.executor().begin(
        error: SyncError(.badClientFile, "an application altered the store's schema", action: .clientReset), store: fixture.store,
        context: fixture.context)
    #expect(record.phase == .done)
    #expect(record.healedChanges == nil)
    #expect(fixture.healer.contributions.isEmpty)
}
