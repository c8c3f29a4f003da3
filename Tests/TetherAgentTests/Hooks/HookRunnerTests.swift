import Foundation
import Logging
import Synchronization
import Testing
@testable import TetherAgent
import TetherProtocol
import TetherTestSupport

/// Collects log records so tests can read what a hook printed.
final class RecordingLog: Sendable {
    struct Record: Sendable { var level: Logger.Level; var message: String; var metadata: [String: String] }
    private let records = Mutex<[Record]>([])
    var all: [Record] { records.withLock { $0 } }
    func lines(_ stream: String = "stdout") -> [String] {
        all.filter { $0.metadata["tether.hook_stream"] == stream }.map(\.message)
    }

    var logger: Logger {
        Logger(label: "test") { _ in Handler(log: self) }
    }

    struct Handler: LogHandler {
        let log: RecordingLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            log.records.withLock {
                $0.append(Record(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
            }
        }
    }
}

/// A temp dir holding hook scripts.
/// Runs a script this test process just wrote. Another test may fork (to spawn sqlite3, a
/// server…) while the script is open for writing; the child holds the descriptor until it
/// execs (O_CLOEXEC closes it there), and executing the script in that window fails with
/// ETXTBSY ("Text file busy"), a kernel race of the test process, not of the runner. Retried
/// a few times, 20 ms apart, for that failure only.
func runRetryingBusyText(_ invocation: HookInvocation, logger: Logger) async -> HookResult {
    var result = await HookRunner().run(invocation, logger: logger)
    for _ in 0..<10 {
        guard case .notStarted(let reason) = result, reason.contains("Text file busy") else { return result }
        try? await Task.sleep(for: .milliseconds(20))
        result = await HookRunner().run(invocation, logger: logger)
    }
    return result
}

struct HookDir: ~Copyable {
    let directory: TemporaryDirectory
    var path: String { directory.path }
    init() throws { directory = try TemporaryDirectory(prefix: "tether-hooks") }

    func script(_ name: String, _ body: String) throws -> String {
        let file = path + "/" + name
        // O_CLOEXEC: a child another test spawns at this moment must not inherit the descriptor,
        // or executing the script fails with ETXTBSY ("Text file busy") while that child runs.
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        let bytes = Array(("#!/bin/sh\n" + body + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else { throw POSIXError(.EIO) }
        chmod(file, 0o755)
        return file
    }

    func invocation(_ executable: String, env: [String: String] = ["PATH": HookInvocation.path], timeout: Duration = .seconds(10), grace: Duration = .seconds(5)) -> HookInvocation {
        HookInvocation(event: .beforeReset, executable: executable, environment: env, workingDirectory: path, timeout: timeout, killGrace: grace)
    }
}

private func alive(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0 else { return false }
    // A zombie has exited; only its exit status is left for a parent that is gone.
    let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    return !stat.contains(") Z ")
}

@Test func hookGetsExactlyTheGivenEnvironmentWithoutAShell() async throws {
    let dir = try HookDir()
    let log = RecordingLog()
    let record = ResetRecord(
        id: "r42", partition: PartitionName("store-17")!, error: SyncError(.divergingHistories, "restored from backup"),
        mode: .recoverUnsyncedChanges, strategy: .recover, backupPath: "/b/x.sqlite", startedAt: 0)
    let env = HookInvocation.environment(
        for: .afterReset, record: record, storePath: "/s/store-17.sqlite", serverURL: "ws://h/sync", outcome: "recovered")
    let result = await HookRunner().run(dir.invocation("/usr/bin/env", env: env), logger: log.logger)
    #expect(result == .succeeded)
    let printed = Set(log.lines())
    let expected: Set<String> = [
        "PATH=\(HookInvocation.path)", "TETHER_EVENT=after-reset", "TETHER_RESET_ID=r42", "TETHER_PARTITION=store-17",
        "TETHER_STORE=/s/store-17.sqlite", "TETHER_BACKUP=/b/x.sqlite", "TETHER_RESET_MODE=recover_unsynced_changes",
        "TETHER_RESET_OUTCOME=recovered", "TETHER_ERROR_CODE=211", "TETHER_ERROR_MESSAGE=restored from backup",
        "TETHER_SERVER_URL=ws://h/sync", "TETHER_RESET_CAUSE=", "TETHER_HEALED_CHANGES=0",
    ]
    #expect(printed == expected)
    #expect(log.all.allSatisfy { $0.metadata["tether.hook"] == "before-reset" })
}

@Test func hookRunsInStateDirWithStdinFromDevNull() async throws {
    let dir = try HookDir()
    let log = RecordingLog()
    let hook = try dir.script("where", "pwd; readlink /proc/self/fd/0; echo oops >&2; exit 3")
    let result = await runRetryingBusyText(dir.invocation(hook), logger: log.logger)
    #expect(result == .failed(exitStatus: 3))
    #expect(log.lines() == [dir.path, "/dev/null"])
    #expect(log.lines("stderr") == ["oops"])
}

@Test func aHookIsOverWhenItExitsAndWhatItLeftInTheBackgroundIsLeftAlone() async throws {
    let dir = try HookDir()
    let hook = try dir.script("leaves", "sleep 1000 & echo $! > \(dir.path)/child.pid; exit 4")
    let log = RecordingLog()
    let result = await runRetryingBusyText(dir.invocation(hook, timeout: .milliseconds(500)), logger: log.logger)
    #expect(result == .failed(exitStatus: 4))
    let pid = Int32(try String(contentsOfFile: "\(dir.path)/child.pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))!
    defer { kill(pid, SIGKILL) }
    #expect(alive(pid), "the background child still holds the hook's stdout, and is not waited for")
    #expect(!log.all.contains { $0.message.contains("SIGTERM") })
}

@Test func aHookThatHadExitedWhenTheDeadlineCameDidNotTimeOut() async throws {
    // The check the timer makes, for an agent too busy to read a hook's last output before its deadline.
    let quick = Process()
    quick.executableURL = URL(fileURLWithPath: "/bin/sh")
    quick.arguments = ["-c", "exit 5"]
    try quick.run()
    try await eventually("the quick child exited") { HookRunner.hasExited(pid: quick.processIdentifier, processDescriptor: -1) }
    let slow = Process()
    slow.executableURL = URL(fileURLWithPath: "/bin/sleep")
    slow.arguments = ["1000"]
    try slow.run()
    // SIGKILL: Foundation starts children with most signals blocked, SIGTERM among them.
    defer { kill(slow.processIdentifier, SIGKILL) }
    #expect(!HookRunner.hasExited(pid: slow.processIdentifier, processDescriptor: -1))
}

@Test func timeoutTerminatesTheWholeProcessGroup() async throws {
    let dir = try HookDir()
    let hook = try dir.script("hang", "sleep 1000 & echo $! > \(dir.path)/child.pid; echo $$ > \(dir.path)/hook.pid; wait")
    let log = RecordingLog()
    let result = await runRetryingBusyText(dir.invocation(hook, timeout: .milliseconds(500)), logger: log.logger)
    #expect(result == .timedOut)
    #expect(log.all.contains { $0.message.contains("SIGTERM") })
    #expect(!log.all.contains { $0.message.contains("SIGKILL") }, "SIGTERM to the group was enough")
    for file in ["child.pid", "hook.pid"] {
        let pid = Int32(try String(contentsOfFile: "\(dir.path)/\(file)", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))!
        try await eventually("\(file) \(pid) ended") { !alive(pid) }
    }
}

@Test func hookIgnoringSIGTERMIsKilled() async throws {
    let dir = try HookDir()
    let log = RecordingLog()
    let hook = try dir.script("stubborn", "trap '' TERM; echo started; while :; do sleep 0.05; done")
    let result = await runRetryingBusyText(dir.invocation(hook, timeout: .milliseconds(300), grace: .milliseconds(300)), logger: log.logger)
    #expect(result == .timedOut)
    #expect(log.lines() == ["started"])
    #expect(log.all.contains { $0.message.contains("SIGKILL") })
}

@Test func megabytesOfOutputAreCutAndCounted() async throws {
    let dir = try HookDir()
    let log = RecordingLog()
    let hook = try dir.script("loud", "yes x | head -c 3000000 | tr -d '\\n'; echo; seq 1 20000")
    var runner = HookRunner()
    runner.maxLoggedLines = 100
    let result = await runner.run(dir.invocation(hook), logger: log.logger)
    #expect(result == .succeeded)
    let lines = log.lines()
    #expect(lines.count == 100)
    #expect(lines[0].hasSuffix("[…line cut at 4096 bytes]"))
    #expect(lines[0].utf8.count < 4200)
    #expect(log.all.contains { $0.message == "hook printed 19901 more lines that were not logged" })
}

@Test func missingHookIsAFailedHook() async throws {
    let dir = try HookDir()
    let result = await HookRunner().run(dir.invocation(dir.path + "/nope"), logger: RecordingLog().logger)
    guard case .notStarted = result else {
        Issue.record("expected notStarted, got \(result)")
        return
    }
}
