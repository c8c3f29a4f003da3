import ArgumentParser
import Foundation
import TetherProtocol
import TetherServer
import TetherTOML

struct AdminStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Partitions with their server version and history size, connected clients.")
    @ParentCommand var admin: AdminCommand

    func run() async throws {
        try await admin.perform({ try await $0.status() }) { status in
            let s = status.server
            var lines = [
                "tether-server \(TerminalText.safe(s.release)), sync protocol \(s.syncProtocol), schema version \(s.schemaVersion)",
                "sync: \(s.syncTerminated ? "TERMINATED (enable-sync to resume)" : "enabled"), client recovery: \(s.clientRecovery ? "on" : "off")",
                "connections: \(s.connections), bound sessions: \(s.sessions)",
            ]
            if status.partitions.isEmpty { return (lines + ["no partitions yet"]).joined(separator: "\n") }
            lines.append(Self.row(["PARTITION", "VERSION", "HISTORY", "HISTORY_BYTES", "ROWS", "CLIENT_FILES", "CONNECTED"]))
            for p in status.partitions {
                lines.append(Self.row([
                    p.name, "\(p.serverVersion)", "\(p.historyEntries)", "\(p.historyBytes)", "\(p.rows)", "\(p.clientFiles)",
                    "\(p.connectedClients)",
                ]))
            }
            let heals = status.partitions.compactMap(\.heal)
            if !heals.isEmpty {
                lines.append("")
                lines.append(Self.row(["RESTORED", "LOST", "MODE", "HEALED_TO", "DEVICES", "HEALED_ROWS", "STATE"]))
                for h in heals {
                    lines.append(Self.row([
                        h.partition, "\(h.restoredTo + 1)...\(h.lostUntil)", h.mode.rawValue, "\(h.healedTo)", "\(h.devices)",
                        "\(h.healedChanges)", h.isHealing ? "healing" : "closed",
                    ]))
                }
            }
            return lines.joined(separator: "\n")
        }
    }

    /// One line of a table, every cell shown safe (TerminalText).
    static func row(_ cells: [String]) -> String {
        let widths = [24, 9, 9, 14, 9, 13, 9]
        return zip(cells.map(TerminalText.safe), widths).map { $0.padding(toLength: max($1, $0.count + 1), withPad: " ", startingAt: 0) }
            .joined().trimmingCharacters(in: .whitespaces)
    }
}

struct AdminSnapshot: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "snapshot", abstract: "Print a snapshot id of a partition's current state.")
    @ParentCommand var admin: AdminCommand
    @Argument(help: "Partition name.") var partition: String

    func run() async throws {
        try await admin.perform({ try await $0.snapshot(partition) }) { TerminalText.safe($0.snapshot) }
    }
}

struct AdminRestore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Restore a partition to a snapshot; devices that synced past it reset, and give the lost window back with --heal.")
    @ParentCommand var admin: AdminCommand
    @Argument(help: "Partition name.") var partition: String
    @Argument(help: "Snapshot id printed by `snapshot`.") var snapshot: String
    @Flag(help: "What becomes of what the server accepted after the snapshot (default: the server's [history] devices_ahead).")
    var mode: RestoreModeOption?

    func run() async throws {
        try await admin.perform({ try await $0.restore(partition, snapshot: snapshot, mode: mode?.mode) }) { r in
            var text = "partition \(TerminalText.safe(r.partition)) restored to snapshot \(TerminalText.safe(r.snapshot)) (server version \(r.serverVersion)); \(r.sessionsNotified) bound sessions told to bind again"
            if let heal = r.heal {
                text += r.mode == .heal
                    ? "\nversions \(heal.restoredTo + 1)...\(heal.lostUntil) were dropped; devices that synced them give them back as they reset (`admin heal-done \(TerminalText.safe(r.partition))` ends it)"
                    : "\nversions \(heal.restoredTo + 1)...\(heal.lostUntil) were rolled back: devices that synced them reset without giving them back"
                        + (mode != .rollback ? " (the snapshot is not on the partition's current line of history: a restore to it cannot be healed)" : "")
            }
            return text
        }
    }
}

struct AdminHealDone: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "heal-done", abstract: "End a partition's heal: devices that bind later reset as after a rollback.")
    @ParentCommand var admin: AdminCommand
    @Argument(help: "Partition name.") var partition: String

    func run() async throws {
        try await admin.perform({ try await $0.healDone(partition) }) { h in
            "heal of \(TerminalText.safe(h.partition)) closed: lost versions \(h.restoredTo + 1)...\(h.lostUntil), healed up to \(h.healedTo) from \(h.devices) devices (\(h.healedChanges) rows changed)"
        }
    }
}

struct AdminTerminateSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "terminate-sync", abstract: "Forget every device's sync identity; devices get an error and retry until enable-sync.")
    @ParentCommand var admin: AdminCommand

    func run() async throws {
        try await admin.perform({ try await $0.terminateSync() }) { r in
            "sync terminated: \(r.clientFilesForgotten) client files forgotten, \(r.sessionsNotified) sessions notified; every device resets after `enable-sync`"
        }
    }
}

struct AdminEnableSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "enable-sync", abstract: "Re-enable sync after terminate-sync.")
    @ParentCommand var admin: AdminCommand

    func run() async throws {
        try await admin.perform({ try await $0.enableSync() }) { _ in "sync enabled" }
    }
}

struct AdminRecovery: AsyncParsableCommand {
    enum Setting: String, ExpressibleByArgument, CaseIterable { case on, off }
    static let configuration = CommandConfiguration(
        commandName: "recovery", abstract: "Enable or disable client recovery (off: resets discard unsynced changes).")
    @ParentCommand var admin: AdminCommand
    @Argument(help: "on or off.") var setting: Setting

    func run() async throws {
        try await admin.perform({ try await $0.setRecovery(setting == .on) }) { "client recovery \($0.enabled ? "on" : "off")" }
    }
}

struct AdminSchema: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "schema", abstract: "Schema commands.", subcommands: [AdminSchemaApply.self])
    @ParentCommand var admin: AdminCommand
}

struct AdminSchemaApply: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply", abstract: "Apply a new schema.toml; prints whether it is breaking. Breaking ones need --allow-breaking.")
    @ParentCommand var schema: AdminSchema
    var admin: AdminCommand { schema.admin }
    @Argument(help: "The new schema.toml.") var file: String
    @Flag(name: .long, help: "Apply a breaking change (every store made with an older schema must reset).") var allowBreaking = false

    func run() async throws {
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
            _ = try Schema.parse(toml: text, file: file)
        } catch let error as ConfigError {
            throw CommandFailure(lines: error.problems.map(\.description), exitCode: 2)
        } catch {
            throw CommandFailure.usage("\(file): cannot read: \(error.localizedDescription)")
        }
        do {
            let result = try await admin.client().applySchema(toml: text, file: file, allowBreaking: allowBreaking)
            print(admin.json ? try AdminCommand.encode(result) : Self.describe(result))
        } catch AdminClient.Failure.rejected(409, _, let hint, let body) {
            // The differences, when the refusal carries them; the failure below is the answer either way.
            if let result = try? JSONDecoder().decode(AdminAPI.SchemaApplied.self, from: body) {
                print(admin.json ? try AdminCommand.encode(result) : Self.describe(result))
            }
            throw CommandFailure.runtime("breaking schema change not applied: \(hint ?? "add --allow-breaking")")
        } catch let failure as AdminClient.Failure {
            throw AdminCommand.commandFailure(failure, json: admin.json)
        }
    }

    static func describe(_ r: AdminAPI.SchemaApplied) -> String {
        var lines = ["schema version \(r.version) (current \(r.previousVersion)): \(r.breaking ? "breaking" : "non-breaking")"]
        lines += r.differences.isEmpty ? ["  no differences"] : r.differences.map { "  \(TerminalText.safe($0))" }
        lines.append(r.applied ? "applied; \(r.sessionsNotified) bound sessions told to bind again" : "not applied")
        return lines.joined(separator: "\n")
    }
}

struct AdminGrant: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant", abstract: "Grant a user, a device, the devices of a tag or every device access to partitions (name, glob or template).")
    @ParentCommand var admin: AdminCommand
    @Argument(help: "Subject: a user or device name, tag:K=V (every device with that tag), or device:* (every enrolled device).") var user: String
    @Argument(help: "Partition name, glob (*, ?) or template ({name}, {id}, {tag:K}).") var pattern: String
    @Argument(help: "read or readwrite.") var access: PartitionAccess

    func validate() throws {
        do throws(GrantSubjectProblem) {
            _ = try GrantSubject.parse(user)
        } catch {
            throw ValidationError("\(error.description) (\(error.hint))")
        }
    }

    func run() async throws {
        try await admin.perform({ try await $0.grant(user: user, pattern: pattern, access: access.rawValue) }) { r in
            "granted \(TerminalText.safe(r.access ?? "")) on \(TerminalText.safe(r.pattern)) to \(TerminalText.safe(r.user)); \(r.sessionsNotified) sessions notified"
        }
    }
}

extension PartitionAccess: ExpressibleByArgument {}

struct AdminRevoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Revoke a grant; bound sessions that lose access get 206.")
    @ParentCommand var admin: AdminCommand
    @Argument(help: "The grant's subject: a user or device name, tag:K=V or device:*.") var user: String
    @Argument(help: "The grant's exact pattern.") var pattern: String

    func run() async throws {
        try await admin.perform({ try await $0.revoke(user: user, pattern: pattern) }) { r in
            "revoked \(TerminalText.safe(r.pattern)) from \(TerminalText.safe(r.user)); \(r.sessionsNotified) sessions notified"
        }
    }
}

struct AdminBackup: AsyncParsableCommand {
    struct Written: Encodable {
        var out: String
        var bytes: Int64
    }
    static let configuration = CommandConfiguration(commandName: "backup", abstract: "Write a consistent copy of the whole server while it runs.")
    @ParentCommand var admin: AdminCommand
    @Option(name: .long, help: "File to write.") var out: String

    func run() async throws {
        try await admin.perform({ Written(out: out, bytes: try await $0.backup(to: out)) }) { "backup written to \($0.out) (\($0.bytes) bytes)" }
    }
}

struct AdminCompact: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact", abstract: "Drop history older than the horizon now (devices that synced before it get 222).")
    @ParentCommand var admin: AdminCommand
    @Option(name: .customLong("horizon-seconds"), help: "Horizon in seconds (default: history_horizon_days).") var horizonSeconds: Int?

    func run() async throws {
        try await admin.perform({ try await $0.compact(horizonSeconds: horizonSeconds) }) { r in
            let total = r.removedEntries.values.reduce(0, +)
            return "removed \(total) history entries" + (r.removedEntries.isEmpty ? "" : " (" + r.removedEntries.sorted { $0.key < $1.key }.map { "\(TerminalText.safe($0.key)): \($0.value)" }.joined(separator: ", ") + ")")
        }
    }
}
