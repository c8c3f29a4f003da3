import Foundation
import Logging
import TetherProtocol
import TetherStore

/// Faults tests inject into a real `tetherd` through its environment. Not for production use;
/// documented in docs/operations.md.
enum FaultInjection {
    /// `TETHER_FAULT_WEDGE_FILE=<path>`: while that file exists, a partition's session hangs
    /// in the middle of handling an event, as a wedged sync loop would; the watchdog must then
    /// stop pinging.
    static let wedgeFile = ProcessInfo.processInfo.environment["TETHER_FAULT_WEDGE_FILE"]

    static func wedgeIfRequested() async {
        guard let wedgeFile else { return }
        while FileManager.default.fileExists(atPath: wedgeFile) && !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(50))  // cancelled: the loop checks and ends
        }
    }

    /// `TETHER_FAULT_RESET_GATE=<dir>`: before a client reset performs the effect of a phase, it
    /// creates `<dir>/<phase>.reached` and waits while `<dir>/<phase>` exists — so a test can
    /// kill the agent at that exact step (docs/contract.md: Reset steps: a restart resumes at the step reached).
    static let resetGate = ProcessInfo.processInfo.environment["TETHER_FAULT_RESET_GATE"]

    /// `TETHER_FAULT_CORRUPT_ON_APPLY=<path>`: when that file exists, the next download a
    /// partition applies fails as SQLite reports a corrupt database (SQLITE_CORRUPT), and the
    /// file is removed — so a test can check what a corruption found while running does.
    static let corruptOnApply = ProcessInfo.processInfo.environment["TETHER_FAULT_CORRUPT_ON_APPLY"]

    static func corruptionIfRequested(store path: String) throws(StoreError) {
        // Removed: this apply fails, once; absent: no fault to inject.
        guard let corruptOnApply, (try? FileManager.default.removeItem(atPath: corruptOnApply)) != nil else { return }
        throw StoreError.sqlite(path: path, code: 11, message: "database disk image is malformed (injected by TETHER_FAULT_CORRUPT_ON_APPLY)")
    }

    /// How long binds may keep meeting 108 before the store takes a new identity (600 s;
    /// `TETHER_FAULT_BOUND_ELSEWHERE_SECONDS` shortens it for tests).
    static let boundElsewhereLimit: Duration = ProcessInfo.processInfo.environment["TETHER_FAULT_BOUND_ELSEWHERE_SECONDS"]
        .flatMap(Double.init).map { .milliseconds(Int64($0 * 1000)) } ?? .seconds(600)

    /// `TETHER_FAULT_FREE_BYTES=<n>`: the free space a state download's disk-space check sees on
    /// every file system (``DiskSpaceCheck``), so a test can run out of space without filling a disk.
    static let freeBytes: Int64? = ProcessInfo.processInfo.environment["TETHER_FAULT_FREE_BYTES"].flatMap { Int64($0) }

    /// `TETHER_FAULT_HEAL_CHUNK_ROWS=<n>`: a reset's view is sent for healing in chunks of at
    /// most `n` changes (so a test can stop it between two).
    static let healChunkRows: Int? = ProcessInfo.processInfo.environment["TETHER_FAULT_HEAL_CHUNK_ROWS"].flatMap { Int($0) }

    /// `TETHER_FAULT_HOLD_HEAL_FILE=<path>`: while that file exists, a contribution to healing
    /// waits after each chunk the server accepted (logging `holding the heal contribution`, then
    /// `heal contribution released`), so a test can kill the server or the agent in the middle.
    static let holdHealFile = ProcessInfo.processInfo.environment["TETHER_FAULT_HOLD_HEAL_FILE"]

    static func holdHealIfRequested(log: Logger, partition: PartitionName) async {
        guard let holdHealFile, FileManager.default.fileExists(atPath: holdHealFile) else { return }
        log.notice("holding the heal contribution of \(partition) (TETHER_FAULT_HOLD_HEAL_FILE)")
        while FileManager.default.fileExists(atPath: holdHealFile) && !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(20))  // cancelled: the loop ends
        }
        log.notice("heal contribution released")
    }

    /// `TETHER_FAULT_NO_READY_FILES=1`: binds never ask for a ready file (the benchmark's rows
    /// bootstrap, measured beside the ready file's).
    static let noReadyFiles = ProcessInfo.processInfo.environment["TETHER_FAULT_NO_READY_FILES"] == "1"

    /// `TETHER_FAULT_ENROLL_GATE=<path>`: once the server answered an enrollment and before
    /// the credential is written, the agent creates `<path>.reached` and waits while `<path>`
    /// exists — so a test can kill it between the answer and the write.
    static let enrollGate = ProcessInfo.processInfo.environment["TETHER_FAULT_ENROLL_GATE"]

    static func enrollGateIfRequested() async {
        guard let enrollGate, FileManager.default.fileExists(atPath: enrollGate) else { return }
        _ = FileManager.default.createFile(atPath: enrollGate + ".reached", contents: nil)
        while FileManager.default.fileExists(atPath: enrollGate) && !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(20))  // cancelled: the loop checks and ends
        }
    }

    /// `TETHER_FAULT_ROTATE_GATE=<dir>`: a credential the server hands over stops at
    /// `<dir>/received` (before it is written) and `<dir>/written` (written, not yet
    /// acknowledged) while that file exists, after creating `<phase>.reached` — so a test can
    /// kill the agent between receiving a credential and acknowledging it.
    static let rotateGate = ProcessInfo.processInfo.environment["TETHER_FAULT_ROTATE_GATE"]

    static func rotateGate(_ phase: String) async {
        if let rotateGate { await hold(at: rotateGate + "/" + phase) }
    }

    static func resetGate(_ phase: String) async {
        if let resetGate { await hold(at: resetGate + "/" + phase) }
    }

    /// While the file `gate` exists (after creating `<gate>.reached`), waits.
    private static func hold(at gate: String) async {
        guard FileManager.default.fileExists(atPath: gate) else { return }
        _ = FileManager.default.createFile(atPath: gate + ".reached", contents: nil)
        while FileManager.default.fileExists(atPath: gate) && !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(20))  // cancelled: the loop checks and ends
        }
    }
}
