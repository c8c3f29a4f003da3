import TetherProtocol

/// One run of a reset hook: what to execute and with exactly which environment (docs/contract.md: Reset hooks).
package struct HookInvocation: Sendable, Hashable {
    /// The search path hooks get; nothing else is inherited from the daemon's environment.
    package static let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    package var event: HookEvent
    package var executable: String
    package var environment: [String: String]
    /// `state_dir`.
    package var workingDirectory: String
    /// `hook_timeout_seconds`: then SIGTERM to the hook's process group, SIGKILL after `killGrace`.
    package var timeout: Duration
    package var killGrace: Duration

    package init(
        event: HookEvent, executable: String, environment: [String: String], workingDirectory: String,
        timeout: Duration, killGrace: Duration = .seconds(5)
    ) {
        self.event = event
        self.executable = executable
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.timeout = timeout
        self.killGrace = killGrace
    }

    /// The environment of docs/contract.md "Reset hooks" for `event` of the reset `record`: only these variables and PATH.
    package static func environment(
        for event: HookEvent, record: ResetRecord, storePath: String, serverURL: String, outcome: String?
    ) -> [String: String] {
        var env = [
            "PATH": path,
            "TETHER_EVENT": event.rawValue,
            "TETHER_RESET_ID": record.id,
            "TETHER_PARTITION": record.partition.rawValue,
            "TETHER_STORE": storePath,
            "TETHER_BACKUP": record.backupPath,
            "TETHER_RESET_MODE": record.mode.rawValue,
            "TETHER_ERROR_CODE": String(record.errorCode.rawValue),
            "TETHER_ERROR_MESSAGE": record.errorMessage,
            "TETHER_RESET_CAUSE": record.cause?.rawValue ?? "",
            "TETHER_SERVER_URL": serverURL,
        ]
        if let outcome { env["TETHER_RESET_OUTCOME"] = outcome }
        // What the reset gave back to a restored server (docs/client-reset.md "Healing a restored server").
        if event == .afterReset { env["TETHER_HEALED_CHANGES"] = String(record.healedChanges ?? 0) }
        return env
    }

    /// The error hook's environment (docs/events.md "The error hook"): only these variables and
    /// PATH. `TETHER_ERROR_CODE` is empty for a transport failure, `TETHER_PARTITION` and
    /// `TETHER_STORE` for an error of the whole connection, `TETHER_RESET_ID` when the error
    /// started no reset. `TETHER_TABLE`, `TETHER_KEY` and `TETHER_REASON` name the row a
    /// compensating write (231) reverted, and are empty for other errors.
    package static func environment(forError report: SyncErrorReport, repeats: Int, serverURL: String) -> [String: String] {
        [
            "TETHER_TABLE": report.compensation?.table ?? "",
            "TETHER_KEY": report.compensation?.key ?? "",
            "TETHER_REASON": report.compensation?.reason ?? "",
            "PATH": path,
            "TETHER_EVENT": HookEvent.syncError.rawValue,
            "TETHER_PARTITION": report.partition,
            "TETHER_STORE": report.store,
            "TETHER_ERROR_CODE": report.code.map(String.init) ?? "",
            "TETHER_ERROR_NAME": report.name,
            "TETHER_ERROR_MESSAGE": report.message,
            "TETHER_ERROR_ACTION": report.action,
            "TETHER_ERROR_CAUSE": report.cause?.rawValue ?? "",
            "TETHER_ERROR_REPEATS": String(repeats),
            "TETHER_RESET_ID": report.resetID ?? "",
            "TETHER_SERVER_URL": serverURL,
        ]
    }
}
