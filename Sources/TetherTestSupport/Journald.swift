import Foundation
import Synchronization

/// A real systemd-journald for tests that check what reaches the journal.
///
/// On a machine booted with systemd, journald already runs and is used as it is. Where systemd
/// is not PID 1 (containers, CI sandboxes) ``ensureRunning(timeout:)`` starts
/// `/lib/systemd/systemd-journald` itself — root only — after creating `/run/systemd/journal/`;
/// journald then listens on `/run/systemd/journal/socket`, `stdout` and `dev-log` and keeps the
/// journal in `/run/log/journal`. The daemon started this way is left running, detached (own
/// session), for later test runs and other processes: it is the machine's system logger, and
/// stopping it would break a concurrent test process using it.
///
/// At most one test in a process starts it; concurrent test processes are serialised by a lock
/// file. Each test logs under its own `SYSLOG_IDENTIFIER` and reads back only its records with
/// ``records(identifier:)``.
package enum Journald {
    package static let socketPath = "/run/systemd/journal/socket"
    package static let binary = "/lib/systemd/systemd-journald"
    static let lockPath = "/run/tether-test-journald.lock"

    private static let launched = Mutex(false)
    private static let reasonPrinted = Mutex(false)

    /// Whether journald answers on its socket now.
    package static var isRunning: Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return UnixAddress.withSockaddr(path: socketPath) { connect(fd, $0, $1) } == 0
    }

    /// Why journald tests cannot run here, or `nil` when they can (journald runs, or this
    /// process may start it).
    package static var unavailableReason: String? {
        if !FileManager.default.isExecutableFile(atPath: "/usr/bin/journalctl") {
            return "/usr/bin/journalctl is missing (hint: apt-get install systemd)"
        }
        if geteuid() != 0 && !canReadSystemJournal {
            return "this user cannot read the system journal (hint: run as root or join group systemd-journal)"
        }
        if isRunning { return nil }
        if geteuid() != 0 { return "journald is not running and only root can start \(binary)" }
        if !FileManager.default.isExecutableFile(atPath: binary) {
            return "journald is not running and \(binary) is missing (hint: apt-get install systemd)"
        }
        return nil
    }

    /// Whether a journal directory of this machine is readable (root, or group systemd-journal).
    private static var canReadSystemJournal: Bool {
        for root in ["/run/log/journal", "/var/log/journal"] {
            // Missing or unreadable: not this one.
            let machines = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
            if machines.contains(where: { access(root + "/" + $0, R_OK | X_OK) == 0 }) { return true }
        }
        return false
    }

    /// Whether journald tests can run here (see ``unavailableReason``); prints the reason when
    /// not. Use it as `@Suite(.enabled(if: Journald.isAvailable, "needs journald"))`.
    package static var isAvailable: Bool {
        if let reason = unavailableReason {
            let first = reasonPrinted.withLock { printed in
                defer { printed = true }
                return !printed
            }
            if first { print("journald tests skipped: \(reason)") }
            return false
        }
        return true
    }

    /// Makes sure journald runs, starting it when needed; throws with the reason when it cannot.
    package static func ensureRunning(timeout: Duration = .seconds(10)) async throws {
        if isRunning { return }
        if let reason = unavailableReason { throw TestSupportError(reason) }
        let first = launched.withLock { launched -> Bool in
            defer { launched = true }
            return !launched
        }
        if first {
            try await launchHoldingLock(timeout: timeout)
        }
        try await eventually("journald listening on \(socketPath)", timeout: timeout) { isRunning }
    }

    /// Starts journald unless another process did so while this one waited for the lock.
    private static func launchHoldingLock(timeout: Duration) async throws {
        let lock = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw TestSupportError("cannot open \(lockPath): \(String(cString: strerror(errno)))") }
        defer { close(lock) }  // closing releases the lock
        try await eventually("lock \(lockPath)", timeout: timeout) { flock(lock, LOCK_EX | LOCK_NB) == 0 }
        if isRunning { return }
        try FileManager.default.createDirectory(atPath: "/run/systemd/journal", withIntermediateDirectories: true)
        // Its own session; reparented to init when this process ends.
        _ = try DetachedProcess.spawn(binary)
        try await eventually("journald listening on \(socketPath)", timeout: timeout) { isRunning }
    }

    /// The records journald holds for a `SYSLOG_IDENTIFIER`, oldest first
    /// (`journalctl -o json --all --no-pager SYSLOG_IDENTIFIER=…`).
    package static func records(identifier: String) async throws -> [JournalRecord] {
        try await records(matching: ["SYSLOG_IDENTIFIER=\(identifier)"])
    }

    /// The records matching journalctl matches such as `TETHER_PARTITION=store-17`.
    package static func records(matching matches: [String]) async throws -> [JournalRecord] {
        let result = try await ChildProcess.run(
            "/usr/bin/journalctl", ["-o", "json", "--all", "--no-pager", "-q"] + matches, timeout: .seconds(20))
        guard result.succeeded else { throw TestSupportError("journalctl failed: \(result)") }
        return try result.standardOutput.split(separator: "\n").map { try JournalRecord(jsonLine: String($0)) }
    }
}
