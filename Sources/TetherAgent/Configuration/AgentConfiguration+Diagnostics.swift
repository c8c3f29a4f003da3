import Foundation
import TetherControl
import TetherProtocol
import TetherSyncClient
import TetherSystemd

extension AgentConfiguration {
    /// The configuration as a diagnostics report shows it (docs/operations.md "Remote
    /// actions"): every key's value, keys as `tetherd.toml` names them, built key by key so
    /// that nothing secret can slip in — files (`token_file`, `enrollment_key_file`,
    /// `ca_file`, hooks) by path only, never what they hold, and the server's URL without a
    /// user, password or query.
    package var diagnostics: JSONValue {
        var root: [String: JSONValue] = [
            "file": .string(file),
            "state_dir": .string(stateDir),
            "log_level": .string(logLevel.rawValue),
            "control_socket": .string(controlSocket),
            "metrics_textfile": .from(metricsTextfile),
            "control": ["operator_group": .string(control.operatorGroup.description)],
            "device": [
                "name": .string(device.name),
                "report_interval_seconds": .from(device.reportIntervalSeconds),
                "remote_actions": .array(device.remoteActions.map { .string($0.rawValue) }),
            ],
            "reset": Self.diagnostics(reset),
            "events": Self.diagnostics(events),
        ]
        root["server"] = [
            "url": .string(Self.redactedURL(server.url)),
            "token_file": .string(server.tokenFile),
            "enrollment_key_file": .from(server.enrollmentKeyFile),
            "ca_file": .from(server.caFile),
            // Digests of the server's public keys: public, and what an operator compares.
            "pin_sha256": .array(server.pinnedKeys.map { .string($0.base64) }),
            "tls_min_version": .string(server.tlsMinVersion.rawValue),
        ]
        root["partition"] = .array(partitions.map { partition in
            var entry: [String: JSONValue] = [
                "name": .string(partition.name.rawValue),
                "store": .string(partition.storePath),
                "reset": Self.diagnostics(partition.reset),
                "events": Self.diagnostics(partition.events),
            ]
            // The filters are configuration, not secrets (a tag's value is the server's).
            if let subscriptions = partition.subscriptions {
                entry["subscription"] = .array(subscriptions.subscriptions.map { ["table": .string($0.table), "where": .from($0.filter)] })
            }
            return .object(entry)
        })
        return .object(root)
    }

    private static func diagnostics(_ reset: ResetSettings) -> JSONValue {
        [
            "mode": .string(reset.mode.rawValue),
            "before_hook": .from(reset.beforeHook),
            "after_hook": .from(reset.afterHook),
            "manual_hook": .from(reset.manualHook),
            "hook_timeout_seconds": .from(reset.hookTimeoutSeconds),
            "recovery_dir": .string(reset.recoveryDir),
            "keep_backups": .from(reset.keepBackups),
        ]
    }

    private static func diagnostics(_ events: EventSettings) -> JSONValue {
        [
            "error_hook": .from(events.errorHook),
            "error_hook_min_interval_seconds": .from(events.errorHookMinIntervalSeconds),
            "hook_timeout_seconds": .from(events.hookTimeoutSeconds),
        ]
    }

    /// `url` without user, password, query or fragment (a URL may carry a secret there);
    /// `(unreadable URL)` when it cannot be taken apart.
    package static func redactedURL(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "(unreadable URL)" }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? "(unreadable URL)"
    }
}
