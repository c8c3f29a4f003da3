import Foundation

/// One thing the agent did or met, as `tetherctl events` shows it (docs/events.md): a partition
/// changed state, a sync error, a reset phase or outcome, a hook that finished, a download's
/// progress, a reload, or a note that a slow reader missed events. Encoded as one JSON object
/// per line with snake_case keys; fields that do not apply are left out.
public struct AgentEvent: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case state
        case syncError = "sync-error"
        case resetPhase = "reset-phase"
        /// The reset's backup of the store exists now (`backup_path`): the store as it was
        /// before the reset, for an application to read (Realm's `beforeReset`).
        case resetBackup = "reset-backup"
        case resetOutcome = "reset-outcome"
        case hook
        case download
        case reload
        case dropped
        /// A store's sync identity was forgotten (`cause`: `machine-changed`).
        case identity
        /// Downloads written into a store: `server_version` reached, `tables` with the rows
        /// changed in each, `rows` in all. Coalesced: at most one a second per partition, and
        /// one when the partition catches up.
        case changesApplied = "changes-applied"
        /// The partition caught up: everything uploaded, the server's latest version stored.
        case synced
        /// The server asked this device for a remote action (protocol 8): `name` the kind,
        /// `action_id` the server's id, `partition` when it names one, `outcome` (`done`,
        /// `refused`, `failed`) and `message` as the server is told.
        case remoteAction = "remote-action"
        /// The server reverted a change of this device instead of integrating it (error 231,
        /// protocol 9): `table`, `key`, `reason` (`outside_subscriptions`, `write_rule`,
        /// `read_only_column`), `message`, and `server_version`, the version whose download
        /// carries the revert. Once per reverted row.
        case compensatingWrite = "compensating-write"
    }

    /// The event's number: one more than the event before, across restarts of the agent (the
    /// last 1,000 are kept in `state_dir/events.sqlite`). A reader that remembers the last one
    /// it handled asks for the events after it (docs/control-protocol.md).
    public var seq: UInt64
    /// When, as RFC 3339 UTC with milliseconds (`2026-11-24T14:50:01.123Z`).
    public var at: String
    public var event: Kind
    public var partition: String?
    public var state: String?
    public var code: Int?
    public var name: String?
    public var message: String?
    public var action: String?
    public var resetID: String?
    public var phase: String?
    public var outcome: String?
    public var hook: String?
    public var exitStatus: Int?
    public var rows: Int64?
    public var bytes: Int64?
    /// `dropped`: how many events this reader missed.
    public var skipped: Int?
    /// Why a store went back in time or had its identity forgotten (`store-regressed`,
    /// `store-cloned`, `machine-changed`; docs/client-reset.md "Restored and cloned devices").
    public var cause: String?
    /// `reset-outcome` of a reset that offered its view to a restored server: the changes the
    /// server wrote from it (0: none).
    public var healedChanges: Int?
    /// `changes-applied`, `synced`: the server version the store holds now.
    public var serverVersion: Int64?
    /// `changes-applied`: rows changed per table (inserted, updated or deleted by the server).
    public var tables: [String: Int64]?
    /// `reset-phase`, `reset-backup`, `reset-outcome`: the store, and the copy of it the reset kept (its
    /// before and after, for an application that compares them).
    public var storePath: String?
    public var backupPath: String?
    /// `remote-action`: the server's id of the action.
    public var actionID: Int64?
    /// `compensating-write`: the row's table and primary key (as text), and why it was reverted.
    public var table: String?
    public var key: String?
    public var reason: String?

    enum CodingKeys: String, CodingKey {
        case seq, at, event, partition, state, code, name, message, action, phase, outcome, hook, rows, bytes, skipped, cause, tables
        case table, key, reason
        case resetID = "reset_id"
        case exitStatus = "exit_status"
        case healedChanges = "healed_changes"
        case serverVersion = "server_version"
        case storePath = "store_path"
        case backupPath = "backup_path"
        case actionID = "action_id"
    }

    public init(
        _ event: Kind, at date: Date = Date(), partition: String? = nil, state: String? = nil, code: Int? = nil,
        name: String? = nil, message: String? = nil, action: String? = nil, resetID: String? = nil, phase: String? = nil,
        outcome: String? = nil, hook: String? = nil, exitStatus: Int? = nil, rows: Int64? = nil, bytes: Int64? = nil,
        skipped: Int? = nil, cause: String? = nil, healedChanges: Int? = nil, serverVersion: Int64? = nil,
        tables: [String: Int64]? = nil, storePath: String? = nil, backupPath: String? = nil,
        table: String? = nil, key: String? = nil, reason: String? = nil
    ) {
        self.table = table
        self.key = key
        self.reason = reason
        self.healedChanges = healedChanges
        self.serverVersion = serverVersion
        self.tables = tables
        self.storePath = storePath
        self.backupPath = backupPath
        self.cause = cause
        self.seq = 0
        self.at = Self.timestamp(date)
        self.event = event
        self.partition = partition
        self.state = state
        self.code = code
        self.name = name
        self.message = message
        self.action = action
        self.resetID = resetID
        self.phase = phase
        self.outcome = outcome
        self.hook = hook
        self.exitStatus = exitStatus
        self.rows = rows
        self.bytes = bytes
        self.skipped = skipped
    }

    /// RFC 3339, UTC, milliseconds.
    public static func timestamp(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        let milliseconds = Int((date.timeIntervalSince1970 - Double(time)) * 1000) % 1000
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), milliseconds)
    }

    /// One line of JSON (no newline), keys in a stable order.
    public var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings and numbers always encode; the fallback keeps the stream one JSON object a line.
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? #"{"event":"dropped"}"#
    }

    /// The event as a JSON document (for answers that carry several).
    public var jsonValue: JSONValue {
        // Always encodes and decodes back (a JSONValue can hold any JSON); .null is unreachable.
        (try? JSONEncoder().encode(self)).flatMap { try? JSONDecoder().decode(JSONValue.self, from: $0) } ?? .null
    }

    /// The event a JSON document describes, if it is one (nil: a kind or shape this build does
    /// not know — skipped by readers, as docs/events.md says).
    public init?(_ value: JSONValue) {
        // Not an event this build knows: nil (see above).
        guard let data = try? JSONEncoder().encode(value), let event = try? JSONDecoder().decode(Self.self, from: data) else { return nil }
        self = event
    }

    /// One line for people: time, event, partition, then the fields that apply.
    public var humanLine: String {
        var parts = [at, event.rawValue, partition.map { $0.isEmpty ? "-" : $0 } ?? "-"]
        if let state { parts.append("state=\(state)") }
        if let phase { parts.append("phase=\(phase)") }
        if let code { parts.append("code=\(code)") }
        if let name { parts.append("name=\(name)") }
        if let action { parts.append("action=\(action)") }
        if let hook { parts.append("hook=\(hook)") }
        if let exitStatus { parts.append("exit_status=\(exitStatus)") }
        if let outcome { parts.append("outcome=\(outcome)") }
        if let resetID { parts.append("reset=\(resetID)") }
        if let rows { parts.append("rows=\(rows)") }
        if let bytes { parts.append("bytes=\(bytes)") }
        if let skipped { parts.append("skipped=\(skipped)") }
        if let healedChanges { parts.append("healed_changes=\(healedChanges)") }
        if let serverVersion { parts.append("server_version=\(serverVersion)") }
        if let tables { parts.append("tables=" + tables.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")) }
        if let backupPath { parts.append("backup=\(backupPath)") }
        if let actionID { parts.append("action_id=\(actionID)") }
        if let table { parts.append("table=\(table)") }
        if let key { parts.append("key=\(key)") }
        if let reason { parts.append("reason=\(reason)") }
        if let message, !message.isEmpty { parts.append("— \(message)") }
        return parts.joined(separator: " ")
    }
}
