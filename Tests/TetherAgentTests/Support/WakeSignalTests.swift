import Testing
@testable import TetherAgent

/// The bug this type exists for: an `AsyncStream` ends when a waiting task is cancelled, so
/// every later backoff returned at once and errors were retried in a hot loop.
@Test func aCancelledWaitDoesNotEndLaterWaitsOrSleeps() async {
    let signal = WakeSignal()
    // A sleep that a cancelled waiter raced against.
    await withTaskGroup(of: Void.self) { group in
        group.addTask { await signal.wait() }
        group.cancelAll()
        await group.waitForAll()
    }
    let start = ContinuousClock.now
    await signal.sleep(for: .milliseconds(300))
    #expect(ContinuousClock.now - start >= .milliseconds(300), "the sleep was not cut short")
}

/// Without the kept signal the hour-long sleep would run into the time limit, which fails the
/// test; no bound on elapsed time, which a loaded machine (a starved cooperative pool) can exceed.
@Test(.timeLimit(.minutes(1))) func aSignalWithNobodyWaitingIsKeptForTheNextWait() async {
    let signal = WakeSignal()
    signal.signal()
    await signal.sleep(for: .seconds(3600))
    #expect(!Task.isCancelled, "woken by the kept signal, not by the time limit")
    let again = ContinuousClock.now
    await signal.sleep(for: .milliseconds(200))
    #expect(ContinuousClock.now - again >= .milliseconds(200), "a signal is used once")
}

@Test func aSignalWakesAWaiter() async {
    let signal = WakeSignal()
    await withTaskGroup(of: Void.self) { group in
        group.addTask { await signal.wait() }
        group.addTask {
            try? await Task.sleep(for: .milliseconds(50))
            signal.signal()
        }
        await group.waitForAll()
    }
}
