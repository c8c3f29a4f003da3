import Foundation
import Testing
import TetherSystemd
import TetherTestSupport

@Test func notifierSendsSystemdAssignments() {
    let sent = LineRecorder()
    let notifier = SystemdNotifier { message in
        sent.append(message)
        return .sent
    }
    let before = SystemdNotifier.monotonicMicroseconds()
    notifier.ready()
    notifier.status("syncing 3 partitions\nall fine")
    notifier.reloading()
    notifier.stopping()
    notifier.extendTimeout(microseconds: 90_000_000)
    notifier.watchdogPing()
    let after = SystemdNotifier.monotonicMicroseconds()
    let messages = sent.lines
    #expect(messages.count == 6)
    #expect(messages[0] == "READY=1")
    #expect(messages[1] == "STATUS=syncing 3 partitions all fine")
    #expect(messages[3...] == ["STOPPING=1", "EXTEND_TIMEOUT_USEC=90000000", "WATCHDOG=1"])
    let reload = messages[2].split(separator: "\n")
    #expect(reload.first == "RELOADING=1")
    let usec = reload.count == 2 ? UInt64(reload[1].dropFirst("MONOTONIC_USEC=".count)) : nil
    #expect(usec.map { (before...after).contains($0) } == true, "\(messages[2])")
}

/// The real thing: libsystemd's sd_notify in a child process, reading NOTIFY_SOCKET.
@Test func probeNotifiesThroughNotifySocket() async throws {
    let directory = try TemporaryDirectory()
    let listener = try NotifySocketListener(directory: directory)
    let before = SystemdNotifier.monotonicMicroseconds()
    let result = try await ChildProcess.run(
        try BuiltProducts.executable("tether-systemd-probe"),
        ["notify", "ready", "status:Syncing 3 partitions", "reloading", "ready", "extend:5000000", "watchdog", "stopping"],
        environment: ChildProcess.inheritedEnvironment(adding: listener.environment), timeout: .seconds(20))
    let after = SystemdNotifier.monotonicMicroseconds()
    #expect(result.succeeded, "\(result)")
    #expect(result.standardOutput.contains("ready: sent"))

    var received: [String] = []
    for _ in 0..<7 {
        received.append(try #require(await listener.next(timeout: .seconds(30)), "got only \(received)"))
    }
    #expect(received[0] == "READY=1")
    #expect(received[1] == "STATUS=Syncing 3 partitions")
    #expect(received[2].hasPrefix("RELOADING=1\nMONOTONIC_USEC="))
    let usec = UInt64(received[2].split(separator: "=").last ?? "")
    #expect(usec.map { (before...after).contains($0) } == true, "\(received[2])")
    #expect(received[3...] == ["READY=1", "EXTEND_TIMEOUT_USEC=5000000", "WATCHDOG=1", "STOPPING=1"])
}

@Test func notifierIsQuietWithoutNotifySocket() async throws {
    var environment = ChildProcess.inheritedEnvironment()
    environment["NOTIFY_SOCKET"] = nil
    let result = try await ChildProcess.run(
        try BuiltProducts.executable("tether-systemd-probe"), ["notify", "ready", "stopping"],
        environment: environment, timeout: .seconds(20))
    #expect(result.succeeded, "\(result)")
    #expect(result.standardOutput == "ready: disabled\nstopping: disabled\n")
    #expect(result.standardError.isEmpty)
}

@Test func unreachableNotifySocketIsReportedNotThrown() async throws {
    let directory = try TemporaryDirectory()
    let result = try await ChildProcess.run(
        try BuiltProducts.executable("tether-systemd-probe"), ["notify", "ready"],
        environment: ChildProcess.inheritedEnvironment(adding: ["NOTIFY_SOCKET": directory.appending("gone.sock")]),
        timeout: .seconds(20))
    #expect(result.succeeded, "\(result)")
    #expect(result.standardOutput.hasPrefix("ready: failed(errno: "))
}
