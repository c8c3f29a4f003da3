import ArgumentParser
import Foundation
import TetherProtocol
import TetherServer

/// `tether-server admin device rotate|revoke|remove|tag|action|actions NAME` (docs/server.md "Enrollment",
/// "Remote actions").
struct AdminDevice: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Change an enrolled device (its tags, its credential, revoke or forget it); ask a device to act.",
        subcommands: [
            AdminDeviceTag.self, AdminDeviceRotate.self, AdminDeviceRevoke.self, AdminDeviceRemove.self, AdminDeviceAction.self,
            AdminDeviceActions.self,
        ])
    @ParentCommand var admin: AdminCommand

    /// One line about a changed device.
    static func describe(_ change: AdminAPI.IdentityChanged, _ what: String) -> String {
        let i = change.identity
        return TerminalText.safe("device \(i.name) \(what): tags \(TagEdit.describe(i.tags)), \(i.state)")
            + "; \(change.sessionsNotified) bound sessions notified"
    }
}

struct AdminDeviceTag: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tag", abstract: "Set (K=V) or remove (K=) a device's tags; its sessions bind again under the grants that follow.")
    @ParentCommand var device: AdminDevice
    @Argument(help: "The device's name.") var name: String
    @Argument(help: "K=V to set a tag, K= to remove it.") var tags: [String]

    func validate() throws {
        if tags.isEmpty { throw ValidationError("give at least one K=V or K=") }
        do throws(TagProblem) {
            _ = try TagEdit.parse(tags)
        } catch {
            throw ValidationError("\(error.description) (\(TagProblem.hint))")
        }
    }

    func run() async throws {
        let edit = try TagEdit.parse(tags)
        let request = AdminAPI.TagRequest(set: edit.set, remove: edit.remove.sorted())
        try await device.admin.perform({ try await $0.tagDevice(name, request) }) { AdminDevice.describe($0, "tagged") }
    }
}

struct AdminDeviceRotate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate", abstract: "Hand a device a new credential; the current one works until the device has the new one.")
    @ParentCommand var device: AdminDevice
    @Argument(help: "The device's name.") var name: String

    func run() async throws {
        try await device.admin.perform({ try await $0.rotateDevice(name) }) { c in
            TerminalText.safe("device \(c.identity.name): new credential handed out (rotation pending until the device confirms it)")
                + "; \(c.sessionsNotified) bound sessions took it"
        }
    }
}

struct AdminDeviceRevoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke", abstract: "Revoke a device: its credential stops working and its sessions end (203); it stays listed.")
    @ParentCommand var device: AdminDevice
    @Argument(help: "The device's name.") var name: String

    func run() async throws {
        try await device.admin.perform({ try await $0.revokeDevice(name) }) { AdminDevice.describe($0, "revoked") }
    }
}

struct AdminDeviceRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Forget a device: its sessions end (203) and its device id may enroll again.")
    @ParentCommand var device: AdminDevice
    @Argument(help: "The device's name.") var name: String

    func run() async throws {
        try await device.admin.perform({ try await $0.removeDevice(name) }) { AdminDevice.describe($0, "removed") }
    }
}

/// `tether-server admin audit`: who changed which identity, how, and when.
struct AdminAudit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "The audit trail of enrollment keys and devices, oldest first.")
    @ParentCommand var admin: AdminCommand
    @Option(name: .long, help: "Only records after this id.") var after: Int64 = 0
    @Option(name: .long, help: "At most this many records (1 to 1000).") var limit: Int = 1000

    func validate() throws {
        if after < 0 { throw ValidationError("--after: 0 or more") }
        if !(1...1000).contains(limit) { throw ValidationError("--limit: 1 to 1000") }
    }

    func run() async throws {
        try await admin.perform({ try await $0.audit(after: after, limit: limit) }) { audit in
            guard !audit.records.isEmpty else { return "no audit records" + (after > 0 ? " after \(after)" : "") }
            var text = AdminTable.render(
                ["ID", "AT", "ACTOR", "ACTION", "SUBJECT", "DETAIL"],
                audit.records.map { ["\($0.id)", $0.at, $0.actor, $0.action, $0.subject, $0.detail] })
            if let next = audit.nextAfter { text += "\n(more: --after \(next))" }
            return text
        }
    }
}

/// `tether-server admin access DEVICE`: what a device may sync and why.
struct AdminAccess: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "access", abstract: "What a device may sync and why: each grant that names it, its name or its tags, expanded.")
    @ParentCommand var admin: AdminCommand
    @Argument(help: "The device's (or [[user]]'s) name.") var device: String

    func run() async throws {
        try await admin.perform({ try await $0.access(device) }) { a in
            var lines = [TerminalText.safe("device \(a.device), tags \(TagEdit.describe(a.tags))")]
            if a.grants.isEmpty { return (lines + ["no grant names this device: it may sync nothing"]).joined(separator: "\n") }
            lines.append(AdminTable.render(
                ["SUBJECT", "PATTERN", "PARTITIONS", "ACCESS", "PROBLEM"],
                a.grants.map { [$0.subject, $0.pattern, $0.partitions ?? "-", $0.access, $0.problem ?? "-"] }))
            return lines.joined(separator: "\n")
        }
    }
}
