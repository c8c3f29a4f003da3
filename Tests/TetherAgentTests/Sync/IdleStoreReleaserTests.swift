import Synchronization
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherAgent
@testable import TetherStore

/// A store that counts its releases; `use()` is a read or write by the agent, `held` an access
/// in progress (a release then does nothing and says so).
private final class FakeStore: IdleReleasable {
    private let counts = Mutex((uses: UInt64(0), releases: 0, held: false))
    var uses: UInt64 { counts.withLock { $0.uses } }
    var releases: Int { counts.withLock { $0.releases } }
    func use() { counts.withLock { $0.uses += 1 } }
    func hold(_ held: Bool) { counts.withLock { $0.held = held } }
    func releaseMemory() -> Bool {
        counts.withLock { counts in
            guard !counts.held else { return false }
            counts.releases += 1
            return true
        }
    }
}

/// How many times the releaser trimmed malloc.
private final class TrimCount: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func add() { count.withLock { $0 += 1 } }
}

@Suite struct IdleStoreReleaserTests {
    @Test func releasesAStoreOnceAfterAnIdleIntervalAndAgainAfterItsNextUse() async throws {
        let clock = ManualClock()
        let busy = FakeStore(), idle = FakeStore()
        let trims = TrimCount()
        let releaser = IdleStoreReleaser(clock: clock, interval: .seconds(15), trim: { trims.add() }) {
            [busy, idle] as [any IdleReleasable]
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await releaser.run() }
            try await stepThrough(clock, busy: busy, idle: idle, trims: trims)
            group.cancelAll()
        }
    }

    private func stepThrough(_ clock: ManualClock, busy: FakeStore, idle: FakeStore, trims: TrimCount) async throws {
        let tick = { try await Self.tick(clock) }
        try await tick()  // first look: nothing known yet
        #expect(busy.releases == 0 && idle.releases == 0)
        busy.use()
        try await tick()  // idle unused for an interval, busy used
        #expect(idle.releases == 1)
        #expect(busy.releases == 0)
        #expect(trims.value == 1, "what the release freed is trimmed at once")
        try await tick()  // both unused: busy released now, idle not again
        #expect(idle.releases == 1)
        #expect(busy.releases == 1)
        #expect(trims.value == 2)
        try await tick()  // nothing released: no trim
        #expect(trims.value == 2)
        idle.use()
        try await tick()  // used again: kept
        #expect(idle.releases == 1)
        try await tick()  // idle again: released again
        #expect(idle.releases == 2)
        #expect(busy.releases == 1)
    }

    @Test func aStoreAnAccessHoldsIsReleasedAtTheFirstLookAfterTheAccess() async throws {
        let clock = ManualClock()
        let store = FakeStore()
        let trims = TrimCount()
        let releaser = IdleStoreReleaser(clock: clock, interval: .seconds(15), trim: { trims.add() }) {
            [store] as [any IdleReleasable]
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await releaser.run() }
            store.use()
            store.hold(true)  // a long access: begun, not ended
            try await Self.tick(clock)  // first look
            try await Self.tick(clock)  // unused for an interval, but held: not released
            try await Self.tick(clock)  // tried again, still held
            #expect(store.releases == 0)
            #expect(trims.value == 0)
            store.hold(false)  // ended without a use counted (a store counts one; here the worst case)
            try await Self.tick(clock)
            #expect(store.releases == 1)
            #expect(trims.value == 1)
            group.cancelAll()
        }
    }

    /// A real store: closed (writer and readers) after an idle interval, opened again by its next
    /// use, closed again after the next idle interval.
    @Test func closesAnIdleStoreWhichReopensOnItsNextUse() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-releaser")
        defer { dir.remove() }
        let schema = Schema(version: 1, tables: [
            TableSchema(name: "notes", primaryKey: "id", columns: [
                ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "body", type: .text),
            ])
        ])
        let store = try await PartitionStore.open(path: dir.appending("store.sqlite"), partition: PartitionName("notes")!, schema: schema)
        defer { try? store.close() }
        let clock = ManualClock()
        let trims = TrimCount()
        let releaser = IdleStoreReleaser(clock: clock, interval: .seconds(15), trim: { trims.add() }) {
            [store] as [any IdleReleasable]
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await releaser.run() }
            try await Self.tick(clock)  // first look
            #expect(store.connections.isOpen)
            try await Self.tick(clock)  // unused for an interval: closed
            #expect(!store.connections.isOpen)
            #expect(trims.value == 1)
            try await store.apply([DownloadEntry(
                serverVersion: ServerVersion(version: 1, salt: 7), integratedClientSeq: 0,
                changeset: Changeset([.insert("notes", .integer(1), ["body": .text("a")])]))])
            #expect(store.connections.isOpen, "opened again by the apply")
            try await Self.tick(clock)  // used since the last look: kept
            #expect(store.connections.isOpen)
            try await Self.tick(clock)
            #expect(!store.connections.isOpen)
            #expect(try await store.metadata().serverVersion.version == 1)
            #expect(store.connections.reopens == 2)
            group.cancelAll()
        }
    }

    @Test func endsWhenCancelled() async throws {
        let clock = ManualClock()
        let releaser = IdleStoreReleaser(clock: clock, trim: {}) { [] }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await releaser.run() }
            #expect(await clock.waitForSleepers(1))
            group.cancelAll()
            try await group.waitForAll()
        }
    }

    /// Lets one interval pass and waits until the releaser has looked and sleeps again.
    private static func tick(_ clock: ManualClock) async throws {
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(15))
        try await eventually("releaser sleeps again") { clock.sleeperCount == 1 }
    }
}
