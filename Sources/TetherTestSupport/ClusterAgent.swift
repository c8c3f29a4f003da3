import Foundation
import Synchronization

/// One `tetherd` of a ``Cluster``: a directory with its config (`tetherd.toml`), token,
/// `hooks/`, state dir and control socket, and the daemon as a child process, started,
/// signalled, stopped and started again as often as a test wants.
package final class ClusterAgent: Sendable {
    /// What the agent's `tetherd.toml` says (see ``config(dir:url:partitions:extra:logLevel:)``).
    package struct Config: Sendable {
        package var url: String
        package var partitions: [String]
        /// Among the top-level keys, before `[server]` (may open tables such as `[reset]`).
        package var extra: String
        package var logLevel: String
        /// More keys of `[server]` (`ca_file = …`, `pin_sha256 = […]`).
        package var server: String
        /// Lines after a partition's `name` (its keys and `[[partition.subscription]]`s), by partition.
        package var partitionExtra: [String: String] = [:]

        package init(url: String, partitions: [String], extra: String = "", logLevel: String = "debug", server: String = "") {
            self.url = url
            self.partitions = partitions
            self.extra = extra
            self.logLevel = logLevel
            self.server = server
        }
    }

    package let name: String
    package let dir: String
    package let configPath: String
    package let socket: String
    let timing: ClusterSettings.Timing
    private let currentConfig: Mutex<Config>
    private let process = Mutex<ChildProcess?>(nil)

    /// `token`: written to `token`, mode 0600; nil writes none (an agent that enrolls).
    init(directory: String, name: String, token: String?, timing: ClusterSettings.Timing, config: Config) throws {
        self.name = name
        self.timing = timing
        dir = directory
        configPath = dir + "/tetherd.toml"
        socket = dir + "/tetherd.sock"
        currentConfig = Mutex(config)
        try FileManager.default.createDirectory(atPath: dir + "/hooks", withIntermediateDirectories: true)
        chmod(dir, 0o755)
        chmod(dir + "/hooks", 0o755)
        if let token { try Cluster.write(token + "\n", to: dir + "/token", mode: 0o600) }
        try writeConfig()
    }

    /// A `tetherd.toml` for an agent in `dir`.
    package static func config(
        dir: String, url: String, partitions: [String], extra: String, logLevel: String = "debug", server: String = "",
        partitionExtra: [String: String] = [:]
    ) -> String {
        """
        state_dir = "\(dir)/state"
        log_level = "\(logLevel)"
        control_socket = "\(dir)/tetherd.sock"
        \(extra)
        [server]
        url = "\(url)"
        token_file = "\(dir)/token"
        \(server)
        \(partitions.map { "[[partition]]\nname = \"\($0)\"\n" + (partitionExtra[$0] ?? "") }.joined(separator: "\n"))
        """
    }

    package var config: Config { currentConfig.withLock { $0 } }

    /// Rewrites `tetherd.toml` with `change` applied (a running daemon reads it on ``reload()``
    /// or its next start).
    package func reconfigure(_ change: (inout Config) -> Void) throws {
        currentConfig.withLock { change(&$0) }
        try writeConfig()
    }

    private func writeConfig() throws {
        let config = self.config
        try Cluster.write(
            Self.config(
                dir: dir, url: config.url, partitions: config.partitions, extra: config.extra, logLevel: config.logLevel,
                server: config.server, partitionExtra: config.partitionExtra),
            to: configPath)
    }

    package var processID: Int32? { process.withLock { $0?.processID } }
    /// Whether the daemon (started at least once) has ended.
    package var hasExited: Bool { process.withLock { $0?.hasExited ?? false } }
    /// The daemon's standard error (its log with `--log-destination stderr`).
    package var log: String { process.withLock { $0?.standardError ?? "" } }

    /// Starts the daemon and waits until its control socket answers.
    package func start(environment extra: [String: String] = [:], logDestination: String = "stderr") async throws {
        let child = try ChildProcess.start(
            try BuiltProducts.executable("tetherd"), ["--config", configPath, "--log-destination", logDestination],
            environment: ChildProcess.inheritedEnvironment(adding: extra))
        process.withLock { $0 = child }
        do {
            try await eventually("tetherd \(name) answers", timeout: timing.start, pollInterval: timing.startPoll) {
                if child.hasExited { throw TestSupportError("tetherd \(name) exited: \(child.standardError)") }
                return (try? await ctl(["status"]))?.status == 0  // not answering yet: asked again
            }
        } catch let timeout as ConditionTimeout {
            // What the daemon was doing when it did not answer: the end of its log, and the
            // machine's load (a start that misses its deadline on a loaded machine is not a hang).
            let tail = child.standardError.split(separator: "\n", omittingEmptySubsequences: false).suffix(30).joined(separator: "\n")
            let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            throw TestSupportError("\(timeout) (load \(load)); its log ends:\n\(tail)")
        }
    }

    package func signal(_ number: Int32) { process.withLock { $0 }?.signal(number) }

    /// Reloads the running daemon (SIGHUP) and waits until its control socket answers.
    package func reload() async throws {
        signal(SIGHUP)
        try await eventually("tetherd \(name) reloaded", timeout: timing.start) {
            (try? await self.ctl(["status"]))?.status == 0  // not answering yet: asked again
        }
    }

    /// Stops the daemon (SIGTERM, or SIGKILL for a crash) and returns how it ended.
    @discardableResult
    package func stop(_ number: Int32 = SIGTERM) async -> ChildProcess.Result? {
        let child = process.withLock { $0 }
        child?.signal(number)
        return await child?.wait(timeout: timing.stop)
    }
}
