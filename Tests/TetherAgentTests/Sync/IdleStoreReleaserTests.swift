import Synchronization
import Testing
import TetherTestSupport
@testable import TetherAgent

/// A store that counts its releases; `use()` is a read or write by the agent.
private final class FakeStore: IdleReleasable {
    private let counts = Mutex((uses: UInt64(0), releases: 0))
    var uses: UInt64 { counts.withLock { $0.uses } }
    var releases: Int { counts.withLock { $0.releases } }
    func use() { counts.withLock { $0.uses += 1 } }
    func releaseMemory() { counts.withLock { $0.releases += 1 } }
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
            group.addTask { try await releaser.run() }
            try await stepThrough(clock, busy: busy, idle: idle, trims: trims)
            group.cancelAll()
        }
    }

    private func stepThrough(_ clock: ManualClock, busy: FakeStore, idle: FakeStore, trims: TrimCount) async throws {
        /// Lets one interval pass and waits until the releaser has looked and sleeps again.
        func tick() async throws {
            #expect(await clock.waitForSleepers(1))
            clock.advance(by: .seconds(15))
            try await eventually("releaser sleeps again") { clock.sleeperCount == 1 }
        }
        try await tick()  // first look: nothing known yet
        #expect(busy.releases == 0 && idle.releases == 0)
        busy.use()
        try await tick()  // idle unused for an interval, busy used
        #expect(idle.releases == 1)
        #expect(busy.releases == 0)
        #expect(trims.value == 0)
        try await tick()  // both unused: busy released now, idle not again; the last look's releases trimmed
        #expect(idle.releases == 1)
        #expect(busy.releases == 1)
        #expect(trims.value == 1)
        idle.use()
        try await tick()  // used again: kept
        #expect(idle.releases == 1)
        try await tick()  // idle again: released again
        #expect(idle.releases == 2)
        #expect(busy.releases == 1)
    }

    @Test func endsWhenCancelled() async throws {
        let clock = ManualClock()
        let releaser = IdleStoreReleaser(clock: clock, trim: {}) { [] }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await releaser.run() }
            #expect(await clock.waitForSleepers(1))
            group.cancelAll()
            try await group.waitForAll()
        }
    }
}
