import Foundation
import Testing
import TetherTestSupport

@Test func temporaryDirectoriesAreUniqueAndRemoved() throws {
    var path = ""
    do {
        let first = try TemporaryDirectory()
        let second = try TemporaryDirectory()
        #expect(first.path != second.path)
        #expect(FileManager.default.createFile(atPath: first.appending("file"), contents: Data("x".utf8)))
        path = first.path
        #expect(FileManager.default.fileExists(atPath: path + "/file"))
    }
    #expect(!FileManager.default.fileExists(atPath: path))
}

@Test func freeLoopbackPortCanBeBound() throws {
    let port = try LoopbackPort.free()
    #expect(port > 0)
    let other = try LoopbackPort.free()
    #expect(other > 0)
}

@Test func childProcessCollectsOutputAndStatus() async throws {
    let result = try await ChildProcess.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"], timeout: TestDeadline.standard)
    #expect(result.status == 3 && !result.signalled && !result.timedOut)
    #expect(result.standardOutput == "out\n")
    #expect(result.standardError == "err\n")
}

@Test func childProcessIsKilledAtItsDeadline() async throws {
    let start = ContinuousClock.now
    let result = try await ChildProcess.run("/bin/sh", ["-c", "echo started; exec sleep 600"], timeout: .milliseconds(300))
    #expect(result.timedOut && result.signalled && result.status == SIGKILL)
    #expect(result.standardOutput == "started\n")
    // Far below the child's own 600 s, with room for a loaded machine.
    #expect(ContinuousClock.now - start < .seconds(120))
}

@Test func eventuallyFailsAfterItsTimeout() async throws {
    await #expect(throws: ConditionTimeout.self) {
        try await eventually("never", timeout: .milliseconds(50)) { false }
    }
    let value = try await eventually { 42 as Int? }
    #expect(value == 42)
}

@Test func manualClockWakesSleepersInOrder() async throws {
    let clock = ManualClock()
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await clock.sleep(for: .seconds(3)) }
        try #require(await clock.waitForSleepers(1, timeout: .seconds(5)))
        clock.advance(by: .seconds(2))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        try await group.next()
        #expect(clock.sleeperCount == 0)
    }
}

@Test func notifySocketListenerReceivesDatagrams() async throws {
    let directory = try TemporaryDirectory()
    let listener = try NotifySocketListener(directory: directory)
    #expect(listener.environment == ["NOTIFY_SOCKET": directory.appending("notify.sock")])
    try await listener.flush()
    #expect(listener.messages.count == 1)
    #expect(await listener.next(timeout: .milliseconds(100))?.hasPrefix("TETHER_TEST_FLUSH=") == true)
    #expect(await listener.next(timeout: .milliseconds(50)) == nil)
}
