import Foundation
import Synchronization

/// A child process started by a test, with its stdout and stderr collected as it runs.
///
///     let result = try await ChildProcess.run("/bin/echo", ["hi"], timeout: .seconds(5))
///     #expect(result.status == 0 && result.standardOutput == "hi\n")
///
/// Long-running children (daemons) are started with ``start(_:_:environment:)`` and stopped
/// with ``signal(_:)`` and ``wait(timeout:)``; a child still running at its deadline is killed
/// (SIGKILL) and its result says ``Result/timedOut``.
package final class ChildProcess: Sendable {
    /// How a child ended and what it wrote.
    package struct Result: Sendable, CustomStringConvertible {
        /// The exit status, or the signal number when ``signalled``.
        package var status: Int32
        /// Whether a signal ended the child.
        package var signalled: Bool
        /// Whether the deadline passed and the child was killed.
        package var timedOut: Bool
        package var standardOutput: String
        package var standardError: String

        /// Exited by itself with status 0.
        package var succeeded: Bool { status == 0 && !signalled && !timedOut }

        package var description: String {
            let how = timedOut ? "killed at deadline" : signalled ? "signal \(status)" : "exit \(status)"
            return "\(how)\n--- stdout\n\(standardOutput)--- stderr\n\(standardError)"
        }
    }

    private struct State: Sendable {
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        var stdoutClosed = false
        var stderrClosed = false
        var termination: (status: Int32, signalled: Bool)?
        var killedAtDeadline = false
    }

    /// The child's process id.
    package let processID: Int32
    private let state: AwaitableState<State>
    /// Keeps Foundation's process object (and its termination monitoring) alive with the child.
    private let process: Mutex<Process>

    private init(process: sending Process, state: AwaitableState<State>) {
        self.processID = process.processIdentifier
        self.state = state
        self.process = Mutex(process)
    }

    /// Starts `executable` with `arguments`. `environment` replaces the test process's
    /// environment when given (use ``inheritedEnvironment(adding:)`` to extend it).
    package static func start(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil
    ) throws -> ChildProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let state = AwaitableState(State())
        // Own close-on-exec pipes, read by plain threads: a descriptor of these pipes must not
        // leak into a child another test spawns at the same moment (it would hold the pipe open
        // and hide the end of file), and reads never block Swift concurrency's threads.
        let stdout = try OutputPipe()
        let stderr = try OutputPipe()
        process.standardOutput = stdout.writer
        process.standardError = stderr.writer
        process.standardInput = FileHandle.nullDevice
        process.terminationHandler = { finished in
            let signalled = finished.terminationReason == .uncaughtSignal
            state.update { $0.termination = (finished.terminationStatus, signalled) }
        }
        do {
            try process.run()
        } catch {
            stdout.closeBothEnds()
            stderr.closeBothEnds()
            throw TestSupportError("cannot start \(executable): \(error)")
        }
        // The parent's copies of the write ends must go, or the readers never see end of file.
        stdout.startReading { chunk in
            state.update { if let chunk { $0.stdout += chunk } else { $0.stdoutClosed = true } }
        }
        let copy = logCopy(executable, arguments)
        stderr.startReading { chunk in
            // The debugging copy: a failed close loses nothing a test reads.
            if let chunk { copy?.write(Data(chunk)) } else { try? copy?.close() }
            state.update { if let chunk { $0.stderr += chunk } else { $0.stderrClosed = true } }
        }
        return ChildProcess(process: process, state: state)
    }

    /// With `TETHER_TEST_CHILD_LOGS=DIR` (for debugging a long run, such as a soak, whose
    /// temporary directories are gone at its end): every child's standard error is also
    /// appended to a file in DIR named after the program and its `--config` (so a restarted
    /// daemon's logs follow its earlier ones).
    private static func logCopy(_ executable: String, _ arguments: [String]) -> FileHandle? {
        guard let directory = ProcessInfo.processInfo.environment["TETHER_TEST_CHILD_LOGS"], !directory.isEmpty else { return nil }
        let config = arguments.firstIndex(of: "--config").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
        let name = (executable as NSString).lastPathComponent
            + (config.map { "-" + $0.split(separator: "/").suffix(3).joined(separator: "_") } ?? "")
        let path = directory + "/" + name + ".log"
        // Not made: the open below fails and no copy is kept.
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: path) else { return nil }
        handle.seekToEndOfFile()
        return handle
    }

    /// Runs a child to completion (or its deadline) and returns how it ended.
    package static func run(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        timeout: Duration = .seconds(30)
    ) async throws -> Result {
        try await start(executable, arguments, environment: environment).wait(timeout: timeout)
    }

    /// This process's environment with `extra` added or replaced.
    package static func inheritedEnvironment(adding extra: [String: String] = [:]) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
    }

    /// What the child wrote to stdout so far.
    package var standardOutput: String { state.read { String(decoding: $0.stdout, as: UTF8.self) } }
    /// What the child wrote to stderr so far.
    package var standardError: String { state.read { String(decoding: $0.stderr, as: UTF8.self) } }
    /// Whether the child has ended.
    package var hasExited: Bool { state.read { $0.termination != nil } }

    /// Sends a signal to the child (`SIGTERM`, `SIGHUP`, …) unless it has already ended.
    package func signal(_ signal: Int32) {
        if !hasExited { kill(processID, signal) }
    }

    /// Waits until stdout or stderr contains `text`; `false` when `timeout` passes first.
    package func waitForOutput(_ text: String, timeout: Duration = TestDeadline.standard) async -> Bool {
        let needle = Array(text.utf8)
        return await state.wait(timeout: timeout) { state in
            state.stdout.containsSequence(needle) || state.stderr.containsSequence(needle)
        }
    }

    /// Waits for the child to end; at the deadline it is killed with SIGKILL.
    package func wait(timeout: Duration) async -> Result {
        if !(await waitForEnd(until: .now + timeout)) {
            state.update { $0.killedAtDeadline = true }
            kill(processID, SIGKILL)
            _ = await waitForEnd(until: .now + .seconds(10))
        }
        // Output still in the pipes; bounded, since a grandchild may hold them open.
        _ = await state.wait(timeout: .seconds(2)) { $0.stdoutClosed && $0.stderrClosed }
        return state.read { state in
            Result(
                status: state.termination?.status ?? -1, signalled: state.termination?.signalled ?? false,
                timedOut: state.killedAtDeadline, standardOutput: String(decoding: state.stdout, as: UTF8.self),
                standardError: String(decoding: state.stderr, as: UTF8.self))
        }
    }
}

extension ChildProcess {
    /// Whether the child ended by `deadline`: told by Foundation's termination handler or, when
    /// that has not come a second after the child exited, read from the kernel. On a loaded
    /// machine a child that had printed its answer and exited was reported "killed at deadline"
    /// (and a `sqlite3` that had run, status -1), its end never told.
    private func waitForEnd(until deadline: ContinuousClock.Instant) async -> Bool {
        while true {
            let left = deadline - .now
            if left <= .zero { return hasExited }
            if await state.wait(timeout: min(left, .seconds(1)), until: { $0.termination != nil }) { return true }
            if let end = Self.endedUnreported(processID) {
                state.update { if $0.termination == nil { $0.termination = end } }
                return true
            }
        }
    }

    /// The end of a child that exited and is not reaped yet, read with `waitid(WNOWAIT)`, which
    /// leaves it for Foundation to reap; nil while it runs (or once reaped: Foundation tells).
    private static func endedUnreported(_ pid: pid_t) -> (status: Int32, signalled: Bool)? {
        var info = siginfo_t()
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0, info._sifields._sigchld.si_pid != 0 else { return nil }
        // si_code: CLD_EXITED 1, CLD_KILLED 2, CLD_DUMPED 3.
        return (info._sifields._sigchld.si_status, info.si_code == 2 || info.si_code == 3)
    }
}

extension Array where Element == UInt8 {
    fileprivate func containsSequence(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard count >= needle.count else { return false }
        for start in 0...(count - needle.count) where self[start] == needle[0] {
            if self[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}
