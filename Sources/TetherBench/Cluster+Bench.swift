import Foundation
import TetherTestSupport

/// The bench's cluster: release programs, the device token of its own, quiet agents, patient
/// timeouts, no per-address connection limit; readers on the second instance when there are two.
extension ClusterSettings {
    static func bench(_ options: BenchOptions, queryable: [String] = []) -> ClusterSettings {
        ClusterSettings(
            token: "bench-device-secret", serverExtra: "log_level = \"info\"",
            // Every bench device connects from 127.0.0.1: the per-address limit (256 by default)
            // would close the bench's 257th connection, and the bytes one peer's unauthenticated
            // connections may hold (1 MiB by default) the connections of 5,000 sessions binding
            // at once while binds wait on PostgreSQL. Ready files are built when a bind asks (as
            // before issue 50), so that no figure shares the machine with a background build;
            // FirstDeviceBench measures those.
            serverConfig: "[limits]\nconnections_per_peer = 1000000\nunauthenticated_bytes_total = 268435456\n"
                + "unauthenticated_bytes_per_peer = 268435456\n[ready_files]\nsettle_seconds = 0\n"
                + (queryable.isEmpty ? "" : "[subscriptions]\nqueryable = [\(queryable.map { "\"\($0)\"" }.joined(separator: ", "))]\n"),
            storage: options.storage == .postgresql ? .postgresql : .sqlite,
            instances: options.instances, agentLogLevel: "warn", timing: .bench, directoryPrefix: "tether-bench")
    }
}

extension Cluster {
    /// Where readers (agent B, the fan-out sessions) connect: the last instance.
    var readerURL: String { url(instance: ports.count - 1) }
    /// The first instance's SQLite database (SQLite storage).
    var serverDatabase: String { serverDataDirectory() + "/server.sqlite" }
    var serverProbe: ProcessProbe? { serverProcesses.first?.map { ProcessProbe(processID: $0.processID) } }
    var readerServerProbe: ProcessProbe? { serverProcesses.last?.map { ProcessProbe(processID: $0.processID) } }
}

extension ClusterAgent {
    var probe: ProcessProbe? { processID.map(ProcessProbe.init(processID:)) }

    /// Changes every partition's reset mode and reloads the running daemon (SIGHUP).
    func reload(resetMode: String) async throws {
        try reconfigure { $0.extra = "[reset]\nmode = \"\(resetMode)\"" }
        try await reload()
    }
}

extension Cluster {
    /// PostgreSQL's CPU seconds (the postmaster and its backends, `postmaster.pid`); nil on SQLite.
    var postgresCPU: Double? {
        guard let postgres,
            let text = try? String(contentsOfFile: postgres.dataDirectory + "/postmaster.pid", encoding: .utf8),  // unreadable: not counted
            let first = text.split(separator: "\n").first, let pid = Int32(first)
        else { return nil }
        return ProcessProbe(processID: pid).cpuSecondsWithChildren
    }

    /// PostgreSQL's CPU seconds since `before` (a ``postgresCPU`` read earlier); nil without one.
    func postgresCPU(since before: Double?) -> Double? {
        guard let before, let now = postgresCPU else { return nil }
        return now - before
    }
}

extension Cluster {
    /// The partition's ready file in the server's cache once built (by default within 10 minutes), and its
    /// compressed slices once written (the server compresses by default).
    func readyFile(of partition: String, timeout: Duration = .seconds(600)) async throws -> (path: String, size: Int, slices: (path: String, size: Int)?) {
        let directory = serverDataDirectory() + "/ready-files/" + partition
        let deadline = ContinuousClock.now + timeout
        // A file not there (yet): 0.
        func size(_ path: String) -> Int { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }
        var found: ContinuousClock.Instant? = nil
        while ContinuousClock.now < deadline {
            // No directory yet: nothing built; looked at again.
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            if let name = names.first(where: { $0.hasPrefix("v") && $0.hasSuffix(".db") }) {
                let path = directory + "/" + name
                let slices = String(path.dropLast(3)) + ".slices"
                if FileManager.default.fileExists(atPath: slices) { return (path, size(path), (slices, size(slices))) }
                // The slices follow the file (they are written once it is named); none a minute on: not compressed.
                if let found, ContinuousClock.now - found > .seconds(60) { return (path, size(path), nil) }
                found = found ?? ContinuousClock.now
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestSupportError("the server built no ready file of \(partition) in \(timeout)")
    }
}
