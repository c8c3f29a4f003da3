import Testing
@testable import TetherServer

/// ``DownloadWakeupMachine``: a session's downloads run once per wake-up, never twice at once,
/// and not at all once the session ended.
struct DownloadWakeupTests {
    typealias Machine = DownloadWakeupMachine<String>

    @Test func aWakeUpBeforeTheWorkIsAttachedStartsItOnAttach() {
        var machine = Machine(woken: true)
        #expect(machine.wake() == nil)
        #expect(machine.attach("send") == "send")
        let again = machine.ranOnce()
        #expect(!again)
        #expect(machine.wake() == "send")
    }

    @Test func withoutAWakeUpTheAttachedWorkWaits() {
        var machine = Machine(woken: false)
        #expect(machine.attach("send") == nil)
        #expect(machine.wake() == "send")
    }

    @Test func wakeUpsWhileRunningMakeItRunOnceMoreNotTwiceAtOnce() {
        var machine = Machine(woken: false)
        _ = machine.attach("send")
        #expect(machine.wake() == "send")
        #expect(machine.wake() == nil)
        #expect(machine.wake() == nil, "coalesced")
        let onceMore = machine.ranOnce()
        #expect(onceMore, "woken meanwhile: once more")
        let thenIdle = machine.ranOnce()
        #expect(!thenIdle)
        #expect(machine.wake() == "send")
    }

    @Test func aFinishedSessionNeverRunsAgain() {
        var machine = Machine(woken: true)
        machine.finish()
        #expect(machine.attach("send") == nil)
        #expect(machine.wake() == nil)
        let again = machine.ranOnce()
        #expect(!again)
        var running = Machine(woken: false)
        _ = running.attach("send")
        _ = running.wake()
        _ = running.wake()
        running.finish()
        let afterEnd = running.ranOnce()
        #expect(!afterEnd, "the session ended while its work ran")
    }

    @Test func theWorkIsAttachedOnce() {
        var machine = Machine(woken: false)
        _ = machine.attach("first")
        #expect(machine.attach("second") == nil)
        #expect(machine.wake() == "first")
    }

    @Test func theLockedWakeupRunsItsWorkOutsideTheLock() async {
        let wakeup = DownloadWakeup()
        var runs = wakeup.runs().makeAsyncIterator()
        #expect(await runs.next() != nil)
        wakeup.wake()
        #expect(await runs.next() != nil)
        wakeup.finish()
        wakeup.wake()
        #expect(wakeup.isFinished)
    }
}

extension DownloadWakeup {
    /// Its runs as a stream, for tests: the work yields and ends at once (calling ``ranOnce()``
    /// inside the work shows it runs outside the lock).
    func runs() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        attach { [self] in
            continuation.yield()
            while ranOnce() { continuation.yield() }
        }
        return stream
    }
}
