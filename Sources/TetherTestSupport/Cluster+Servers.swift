import Foundation
import Synchronization

/// The server instances: start, signal, stop, and `tether-server admin`.
extension Cluster {
    /// The running first instance's process (for its log and signals).
    package var serverProcess: ChildProcess? { serverProcess(instance: 0) }

    package func serverProcess(instance: Int) -> ChildProcess? { servers.withLock { $0[instance] } }

    /// Every instance's process, the first instance's first (nil for one not running).
    package var serverProcesses: [ChildProcess?] { servers.withLock { $0 } }

    /// Starts an instance (again, after ``killServer(instance:)``) and waits until both its
    /// listeners (the devices' and the admin one) listen.
    package func startServer(instance: Int = 0) async throws {
        let process = try ChildProcess.start(
            try BuiltProducts.executable("tether-server"), ["--config", serverConfigPath(instance)],
            environment: ChildProcess.inheritedEnvironment(adding: settings.serverEnvironment))
        servers.withLock { $0[instance] = process }
        guard await process.waitForOutput("tether-server listening on", timeout: settings.timing.start),
            await process.waitForOutput("admin listening on", timeout: settings.timing.start)
        else {
            process.signal(SIGKILL)
            _ = await process.wait(timeout: settings.timing.stop)
            throw TestSupportError("tether-server did not start: \(process.standardError)")
        }
    }

    package func signalServer(_ number: Int32, instance: Int = 0) { serverProcess(instance: instance)?.signal(number) }

    /// Kills an instance (a crash) and waits for it to end.
    package func killServer(instance: Int = 0) async { await stopServer(SIGKILL, instance: instance) }

    /// Signals an instance and waits for it to end.
    package func stopServer(_ number: Int32 = SIGTERM, instance: Int = 0) async {
        let process = serverProcess(instance: instance)
        process?.signal(number)
        _ = await process?.wait(timeout: settings.timing.stop)
    }

    /// `tether-server admin …` against an instance's admin listener (the first unless told);
    /// its standard output, trimmed.
    @discardableResult
    package func admin(_ arguments: [String], instance: Int = 0) async throws -> String {
        let result = try await ChildProcess.run(
            try BuiltProducts.executable("tether-server"),
            ["admin", "--url", adminURL(instance: instance), "--token-file", dir.appending("admin.token")] + arguments,
            timeout: settings.timing.command)
        guard result.status == 0 else { throw TestSupportError("admin \(arguments) failed: \(result)") }
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
