import Logging
import Subprocess
import Synchronization
import SystemPackage
import Glibc

/// Runs reset hooks as docs/contract.md "Reset hooks" says: executed directly (no shell), stdin `/dev/null`, working
/// directory `state_dir`, only the given environment, in a process group of its own; each
/// output line goes to the log with the hook's event; on timeout the whole group gets SIGTERM
/// and, `killGrace` later, SIGKILL.
package struct HookRunner: Sendable {
    /// Lines longer than this are cut (and marked) before they are logged.
    package var maxLineBytes = 4096
    /// After this many lines a run's further output is counted, not logged.
    package var maxLoggedLines = 10_000
    private let clock: any Clock<Duration>

    package init(clock: any Clock<Duration> = ContinuousClock()) {
        self.clock = clock
    }

    /// Runs `hook` to completion; never throws: a hook that cannot start is a failed hook.
    /// `logger` should carry the partition and reset id as metadata.
    ///
    /// Hooks are checked at start, `--check-config` and reload; the file is checked again
    /// here, whoever runs it, because it may have changed since: one that is missing, not
    /// executable or writable by others is not started.
    package func run(_ hook: HookInvocation, logger: Logger) async -> HookResult {
        if let problem = AgentConfiguration.hookProblem(hook.executable) { return .notStarted(reason: problem) }
        let logger = {
            var logger = logger
            logger[metadataKey: "tether.hook"] = .string(hook.event.rawValue)
            return logger
        }()
        var options = PlatformOptions()
        options.processGroupID = 0  // its own group, so a timeout reaches every process it started
        let timedOut = TimeoutFlag()
        let lines = LineBudget(limit: maxLoggedLines)
        do {
            let environment = Dictionary(uniqueKeysWithValues: hook.environment.map { (Environment.Key(rawValue: $0.key)!, $0.value) })
            let result = try await Subprocess.run(
                .path(FilePath(hook.executable)), arguments: [], environment: .custom(environment),
                workingDirectory: FilePath(hook.workingDirectory), platformOptions: options,
                input: .none, output: .sequence, error: .sequence
            ) { execution in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        try await forwardLines(execution.standardOutput, stream: "stdout", logger: logger, budget: lines)
                    }
                    group.addTask {
                        try await forwardLines(execution.standardError, stream: "stderr", logger: logger, budget: lines)
                    }
                    group.addTask {
                        try await clock.sleep(for: hook.timeout)
                        // A hook that exited in time did not time out, even when this process was
                        // too busy to read its last output before the deadline.
                        if Self.hasExited(execution.processIdentifier) { return }
                        timedOut.set()
                        logger.warning("hook timed out after \(hook.timeout); sending SIGTERM to its process group")
                        // The group may be gone already: nothing left to stop.
                        try? execution.send(signal: .terminate, toProcessGroup: true)
                        try await clock.sleep(for: hook.killGrace)
                        logger.warning("hook still running \(hook.killGrace) after SIGTERM; sending SIGKILL to its process group")
                        try? execution.send(signal: .kill, toProcessGroup: true)  // as above
                    }
                    // The two readers end when the hook exits (what it printed is drained first); processes
                    // it left in the background are neither waited for nor signalled.
                    try await group.next()
                    try await group.next()
                    group.cancelAll()
                }
            }
            let dropped = lines.dropped
            if dropped > 0 { logger.warning("hook printed \(dropped) more lines that were not logged") }
            if timedOut.isSet { return .timedOut }
            switch result.terminationStatus {
            case .exited(let code): return code == 0 ? .succeeded : .failed(exitStatus: code)
            case .signaled(let signal): return .killedBySignal(signal)
            }
        } catch {
            return .notStarted(reason: "\(error)")
        }
    }

    /// Whether the hook's own process has ended (a zombie not yet reaped, or already reaped),
    /// without reaping it: Subprocess collects its status.
    static func hasExited(_ process: ProcessIdentifier) -> Bool {
        hasExited(pid: process.value, processDescriptor: process.processDescriptor)
    }

    static func hasExited(pid: pid_t, processDescriptor: CInt) -> Bool {
        var info = siginfo_t()
        let options = WEXITED | WNOHANG | WNOWAIT
        let status = processDescriptor >= 0
            ? waitid(idtype_t(rawValue: 3 /* P_PIDFD */), id_t(processDescriptor), &info, options)
            : waitid(P_PID, id_t(pid), &info, options)
        if status != 0 { return errno == ECHILD }  // reaped already
        return info._sifields._sigchld.si_pid != 0
    }

    /// Splits raw output into lines (bytes, so any output is safe), cuts long ones, and logs them.
    private func forwardLines(
        _ output: SubprocessOutputSequence, stream: String, logger: Logger, budget: LineBudget
    ) async throws {
        var pending: [UInt8] = []
        var cut = false
        func emit() {
            if budget.take() {
                var text = String(decoding: pending, as: UTF8.self)
                if cut { text += " […line cut at \(maxLineBytes) bytes]" }
                logger.notice("\(text)", metadata: ["tether.hook_stream": .string(stream)])
            }
            pending.removeAll(keepingCapacity: true)
            cut = false
        }
        for try await buffer in output {
            buffer.withUnsafeBytes { bytes in
                for byte in bytes {
                    if byte == UInt8(ascii: "\n") {
                        emit()
                    } else if pending.count < maxLineBytes {
                        pending.append(byte)
                    } else {
                        cut = true
                    }
                }
            }
        }
        if !pending.isEmpty || cut { emit() }
    }
}

/// Set once the hook ran out of time.
private final class TimeoutFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// How many more hook lines may be logged in one run.
private final class LineBudget: Sendable {
    private let state: Mutex<(left: Int, dropped: Int)>
    init(limit: Int) { state = Mutex((limit, 0)) }
    func take() -> Bool {
        state.withLock { state in
            if state.left > 0 {
                state.left -= 1
                return true
            }
            state.dropped += 1
            return false
        }
    }
    var dropped: Int { state.withLock { $0.dropped } }
}
