import TetherProtocol
import TetherSystemd
import TetherTOML
import Foundation

/// Everything `tetherd.toml` says (docs/contract.md: Agent configuration), validated. Built by ``load(path:)``:
/// defaults → parse → validate → build; per-partition `[partition.reset]` inherits `[reset]`.
package struct AgentConfiguration: Sendable, Hashable {
    package static let defaultPath = "/etc/tether/tetherd.toml"
    package static let defaultStateDir = "/var/lib/tether"
    package static let defaultControlSocket = "/run/tether/tetherd.sock"

    /// The file it was read from.
    package var file: String
    package var stateDir: String
    package var logLevel: TetherLogLevel
    package var controlSocket: String
    package var server: ServerSettings
    /// The `[reset]` defaults (each partition holds its own inherited copy).
    package var reset: ResetSettings
    /// The `[events]` defaults (each partition holds its own inherited copy); connection-level
    /// errors use these.
    package var events = EventSettings()
    package var partitions: [PartitionSettings]
    /// `metrics_textfile`: where tetherd writes its metrics every 15 s for node_exporter's
    /// textfile collector; nil: not written.
    package var metricsTextfile: String? = nil
    /// `[control]`: who may run the control socket's changing commands.
    package var control = ControlSettings()
    /// `[device]`: the device's name in the server's ledger and how often it reports.
    package var device = DeviceSettings()

    package var stateDatabasePath: String { stateDir + "/state.sqlite" }
    /// The last events, kept across restarts (``EventJournal``).
    package var eventJournalPath: String { stateDir + "/events.sqlite" }
    package var storesDir: String { stateDir + "/stores" }

    package func partition(named name: PartitionName) -> PartitionSettings? {
        partitions.first { $0.name == name }
    }

    /// Reads, parses and validates `path`; a missing or unreadable file is a problem too.
    /// `checkFiles` false skips the token, key and hook file checks (`tetherctl enroll`, which
    /// writes the token and is given its key).
    package static func load(path: String, checkFiles: Bool = true) throws(ConfigError) -> AgentConfiguration {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
            throw ConfigError(file: path, "configuration file \(reason)")
        }
        return try parse(text: text, file: path, checkFiles: checkFiles)
    }

    /// Parses and validates configuration text; `file` names it in problems and resolves nothing.
    /// Validation includes the file system checks: token file permissions, hooks.
    package static func parse(text: String, file: String, checkFiles: Bool = true) throws(ConfigError) -> AgentConfiguration {
        let parser = try ConfigParser(text: text, file: file)
        var config = build(parser.root)
        if checkFiles { config?.validateFiles(parser) }
        config?.loadCertificateAuthorities(parser)
        try parser.finish()
        guard var config else { throw ConfigError(file: file, "invalid configuration") }
        config.file = file
        return config
    }

    static func build(_ root: ConfigTable) -> AgentConfiguration? {
        let stateDir = root.absolutePath("state_dir") ?? defaultStateDir
        var logLevel = TetherLogLevel.info
        if let name = root.string("log_level") {
            if let level = TetherLogLevel(rawValue: name) {
                logLevel = level
            } else {
                let names = TetherLogLevel.allCases.map(\.rawValue).joined(separator: " ")
                root.problem("log_level", "\(name.debugDescription) is not one of \(names)")
            }
        }
        let controlSocket = root.absolutePath("control_socket") ?? defaultControlSocket
        let metricsTextfile = root.absolutePath("metrics_textfile")
        if let metricsTextfile, !metricsTextfile.hasSuffix(".prom") {
            root.problem("metrics_textfile", "\(metricsTextfile.debugDescription) must end in .prom (node_exporter's textfile collector reads only those)")
        }

        let server = root.table("server", required: true).flatMap(buildServer)
        let resetDefaults = ResetSettings(recoveryDir: stateDir + "/recovery")
        let reset = root.table("reset").map { buildReset($0, inheriting: resetDefaults) } ?? resetDefaults
        let events = root.table("events").map { buildEvents($0, inheriting: EventSettings()) } ?? EventSettings()
        let control = root.table("control").map(buildControl) ?? ControlSettings()
        let device = DeviceSettings.parse(root.table("device"))

        var partitions: [PartitionSettings] = []
        var names: Set<PartitionName> = []
        var stores: Set<String> = []
        let tables = root.tables("partition")
        if tables.isEmpty && !root.has("partition") {
            root.problem("partition", "no [[partition]] configured; the agent would have nothing to sync")
        }
        for table in tables {
            guard let raw = table.string("name", required: true) else { continue }
            guard let name = PartitionName(raw) else {
                table.problem("name", "\(raw.debugDescription) is not a legal partition name ([A-Za-z0-9][A-Za-z0-9._-]{0,127})")
                continue
            }
            let store = table.absolutePath("store") ?? "\(stateDir)/stores/\(name).sqlite"
            if !names.insert(name).inserted {
                table.problem("name", "partition \(name) is configured twice")
            } else if !stores.insert(store).inserted { table.problem("store", "\(store) is already the store of another partition") }
            let partitionReset = table.table("reset").map { buildReset($0, inheriting: reset) } ?? reset
            let partitionEvents = table.table("events").map { buildEvents($0, inheriting: events) } ?? events
            partitions.append(PartitionSettings(
                name: name, storePath: store, reset: partitionReset, events: partitionEvents,
                subscriptions: PartitionSettings.parseSubscriptions(table)))
        }
        guard let server else { return nil }
        var configuration = AgentConfiguration(
            file: "", stateDir: stateDir, logLevel: logLevel, controlSocket: controlSocket, server: server,
            reset: reset, partitions: partitions)
        configuration.metricsTextfile = metricsTextfile
        configuration.events = events
        configuration.control = control
        configuration.device = device
        return configuration
    }

    private static func buildServer(_ table: ConfigTable) -> ServerSettings? {
        let url = table.string("url", required: true)
        if let url, !(url.hasPrefix("ws://") || url.hasPrefix("wss://")) || URL(string: url)?.host == nil {
            table.problem("url", "\(url.debugDescription) must be a ws:// or wss:// URL with a host")
        }
        let tokenFile = table.absolutePath("token_file", required: true)
        let caFile = table.absolutePath("ca_file")
        if let caFile, let url, !url.hasPrefix("wss://") {
            table.problem("ca_file", "\(caFile) is set but the server url is not wss://")
        }
        let trust = ServerSettings.parseTrust(table, url: url)
        let enrollmentKeyFile = table.absolutePath("enrollment_key_file")
        if let enrollmentKeyFile, enrollmentKeyFile == tokenFile {
            table.problem("enrollment_key_file", "\(enrollmentKeyFile) is also token_file; the key and the credential are two files")
        }
        guard let url, let tokenFile else { return nil }
        return ServerSettings(url: url, tokenFile: tokenFile, caFile: caFile, trust: trust, enrollmentKeyFile: enrollmentKeyFile)
    }

    private static func buildEvents(_ table: ConfigTable, inheriting base: EventSettings) -> EventSettings {
        var events = base
        events.errorHook = table.absolutePath("error_hook") ?? base.errorHook
        events.errorHookMinIntervalSeconds =
            table.integer("error_hook_min_interval_seconds", range: 0...86_400) ?? base.errorHookMinIntervalSeconds
        events.hookTimeoutSeconds = table.integer("hook_timeout_seconds", range: 1...86_400) ?? base.hookTimeoutSeconds
        return events
    }

    private static func buildReset(_ table: ConfigTable, inheriting base: ResetSettings) -> ResetSettings {
        var reset = base
        reset.mode = table.enumeration("mode", ResetMode.self) ?? base.mode
        reset.beforeHook = table.absolutePath("before_hook") ?? base.beforeHook
        reset.afterHook = table.absolutePath("after_hook") ?? base.afterHook
        reset.manualHook = table.absolutePath("manual_hook") ?? base.manualHook
        reset.hookTimeoutSeconds = table.integer("hook_timeout_seconds", range: 1...86_400) ?? base.hookTimeoutSeconds
        reset.recoveryDir = table.absolutePath("recovery_dir") ?? base.recoveryDir
        reset.keepBackups = table.integer("keep_backups", range: 1...10_000) ?? base.keepBackups
        return reset
    }
}
