import Foundation
import Logging
import ServiceLifecycle
import ServiceLifecycleTestKit
import Synchronization
import Testing
import TetherSystemd
import TetherTestSupport

/// A health check the test flips.
private final class Switch: HealthCheck {
    private let healthy = Atomic<Bool>(true)
    func set(_ value: Bool) { healthy.store(value, ordering: .relaxed) }
    func isMakingProgress() async -> Bool { healthy.load(ordering: .relaxed) }
}

private struct Harness {
    let clock = ManualClock()
    let pings = LineRecorder()
    let logs = LineRecorder()
    let health = Switch()

    func service(interval: Duration?) -> WatchdogService<ManualClock> {
        let pings = pings
        let logs = logs
        return WatchdogService(
            interval: interval,
            notifier: SystemdNotifier { message in
                pings.append(message)
                return .sent
            },
            healthCheck: health, clock: clock,
            logger: Logger(label: "tether.watchdog") { _ in
                StderrLogHandler(levelBox: LogLevelBox(.trace), output: logs.append)
            })
    }

    /// Advances one ping period and waits until the service is parked in `sleep` again.
    func tick(_ period: Duration) async throws {
        clock.advance(by: period)
        try #require(await clock.waitForSleepers(1, timeout: .seconds(120)))
    }
}

@Test func pingsAtHalfTheIntervalOnlyWhileHealthy() async throws {
    let harness = Harness()
    let service = harness.service(interval: .seconds(10))
    #expect(service.pingPeriod == .seconds(5))
    try await testGracefulShutdown { trigger in
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            try #require(await harness.clock.waitForSleepers(1, timeout: .seconds(120)))
            #expect(harness.pings.lines == ["WATCHDOG=1"], "first ping at start")

            harness.clock.advance(by: .seconds(4))
            #expect(harness.clock.sleeperCount == 1 && harness.pings.lines.count == 1, "not before half the interval")
            try await harness.tick(.seconds(1))
            #expect(harness.pings.lines.count == 2)
            try await harness.tick(.seconds(5))
            #expect(harness.pings.lines.count == 3)

            harness.health.set(false)
            for _ in 0..<3 { try await harness.tick(.seconds(5)) }
            #expect(harness.pings.lines.count == 3, "no ping while stalled")
            #expect(harness.logs.lines.count == 1, "stall logged once: \(harness.logs.lines)")
            #expect(harness.logs.lines.first?.contains(" warn  [tether.watchdog_usec=10000000] no progress") == true)

            harness.health.set(true)
            try await harness.tick(.seconds(5))
            try await harness.tick(.seconds(5))
            #expect(harness.pings.lines.count == 5)
            #expect(harness.logs.lines.count == 2)
            #expect(harness.logs.lines.last?.contains(" info  progress again") == true)
            #expect(Set(harness.pings.lines) == ["WATCHDOG=1"])

            trigger.triggerGracefulShutdown()
            try await group.next()
        }
    }
}

@Test func withoutWatchdogItWaitsForShutdownWithoutPinging() async throws {
    let harness = Harness()
    let service = harness.service(interval: nil)
    #expect(service.pingPeriod == nil)
    try await testGracefulShutdown { trigger in
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            trigger.triggerGracefulShutdown()
            try await group.next()
        }
    }
    #expect(harness.pings.lines.isEmpty)
}

@Test func cancellationEndsTheService() async throws {
    let harness = Harness()
    let service = harness.service(interval: .seconds(2))
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await service.run() }
        try #require(await harness.clock.waitForSleepers(1, timeout: .seconds(120)))
        group.cancelAll()
        try await group.next()
    }
    #expect(harness.pings.lines.count == 1)
}

/// The real thing: a child with WATCHDOG_USEC=200ms in a ServiceGroup, sd_notify, real time.
@Test func probePingsEvery100msStopsWhenStalledAndResumes() async throws {
    let directory = try TemporaryDirectory()
    let listener = try NotifySocketListener(directory: directory)
    let stallFile = directory.appending("stall")
    let start = ContinuousClock.now
    let child = try ChildProcess.start(
        try BuiltProducts.executable("tether-systemd-probe"), ["watchdog", stallFile],
        environment: ChildProcess.inheritedEnvironment(adding: listener.environment.merging(["WATCHDOG_USEC": "200000"]) { $1 }))
    defer { child.signal(SIGKILL) }
    let isPing: @Sendable (String) -> Bool = { $0 == "WATCHDOG=1" }

    // Measured from the first ping, so a slow start of the child on a loaded machine does not
    // count: the next five pings come one period (100 ms) apart each.
    #expect(await listener.waitForCount(1, timeout: .seconds(30), where: isPing), "\(child.standardError)")
    let first = ContinuousClock.now
    #expect(await listener.waitForCount(6, timeout: .seconds(30), where: isPing), "\(child.standardError)")
    let sixth = ContinuousClock.now
    #expect(sixth - start >= .milliseconds(500), "pinged too often: 6 pings in \(sixth - start)")
    // Loose on purpose (a loaded machine took 4.7 s, make test 2026-11-29): it catches an
    // interval off by an order of magnitude (WATCHDOG_USEC read as ms: 100 s), not jitter.
    #expect(sixth - first < .seconds(10), "pinged too rarely: 5 periods took \(sixth - first)")
    #expect(child.standardOutput.contains("watchdog interval: 0.2 seconds"))

    #expect(FileManager.default.createFile(atPath: stallFile, contents: nil))
    #expect(await child.waitForOutput("watchdog pings stopped", timeout: TestDeadline.standard))
    try await listener.flush()
    let stalledCount = listener.count(where: isPing)
    try await consistently("no ping while stalled", for: .milliseconds(600)) {
        listener.count(where: isPing) == stalledCount
    }

    try FileManager.default.removeItem(atPath: stallFile)
    #expect(await child.waitForOutput("watchdog pings resumed", timeout: TestDeadline.standard))
    #expect(await listener.waitForCount(stalledCount + 2, timeout: TestDeadline.standard, where: isPing))

    child.signal(SIGTERM)
    let result = await child.wait(timeout: TestDeadline.standard)
    #expect(result.succeeded, "\(result)")
    #expect(result.standardOutput.contains("watchdog stopped"))
    #expect(result.standardError.components(separatedBy: "watchdog pings stopped").count == 2, "stall logged once")
}

@Test func probeIgnoresWatchdogMeantForAnotherProcess() async throws {
    let directory = try TemporaryDirectory()
    let listener = try NotifySocketListener(directory: directory)
    let child = try ChildProcess.start(
        try BuiltProducts.executable("tether-systemd-probe"), ["watchdog", directory.appending("stall")],
        environment: ChildProcess.inheritedEnvironment(
            adding: listener.environment.merging(["WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"]) { $1 }))
    defer { child.signal(SIGKILL) }
    #expect(await child.waitForOutput("watchdog interval: none", timeout: TestDeadline.standard))
    // The group logs this after it trapped SIGTERM.
    #expect(await child.waitForOutput("] Starting service\n", timeout: TestDeadline.standard))
    child.signal(SIGTERM)
    let result = await child.wait(timeout: TestDeadline.standard)
    #expect(result.succeeded, "\(result)")
    try await listener.flush()
    #expect(listener.count { $0 == "WATCHDOG=1" } == 0)
}
