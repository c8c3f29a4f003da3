import Foundation
import TetherTestSupport

/// The bench's cluster: release programs, the device token of its own, quiet agents, patient
/// timeouts, no per-address connection limit; readers on the second instance when there are two.
extension ClusterSettings {
    static func bench(_ options: BenchOptions) -> ClusterSettings {
        ClusterSettings(
            // Every bench device connects from 127.0.0.1: the per-address limit (256 by default)
            // would close the connections bench's 257th.
                        // Ready files are built when a bind asks (as before issue 50), so that no figure
            // shares the machine with a background build; FirstDeviceBench measures those.
            token: "bench-device-secret", serverExtra: "log_level = \"info\"",
            serverConfig: "[limits]\nconnections_per_peer = 1000000\n[ready_files]\nsettle_seconds = 0\n",
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
}
