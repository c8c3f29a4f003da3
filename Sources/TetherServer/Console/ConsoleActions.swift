import Foundation
import HTTPTypes
import Logging
import TetherProtocol

/// The console's admin actions (snapshot, restore, terminate and enable sync, grant, revoke;
/// enrollment keys and devices, ``ConsoleActions+Identities``):
/// a first POST shows what the action will do and asks for confirmation; the confirming POST
/// (`confirmed=yes`) carries it out through ``ServerControl``, as the admin API would, and
/// shows the outcome.
struct ConsoleActions {
    let control: ServerControl
    typealias H = ConsoleHTML

    func run(_ action: String, form: ConsoleActionForm, csrf: String) async -> HTML {
        let back = Self.back(action, form)
        let described: String?
        do {
            described = action == Self.remoteAction ? try await describeRemote(form) : Self.describe(action, form)
        } catch let error as AdminError {
            return ConsolePages.outcome(title: "Refused", message: error.message + (error.hint.map { " (\($0))" } ?? ""), error: true, back: back)
        } catch {
            return ConsolePages.outcome(title: "Failed", message: "\(error)", error: true, back: back)
        }
        guard let description = described else {
            return ConsolePages.outcome(title: "Refused", message: "Unknown action or missing fields.", error: true, back: "/console/partitions")
        }
        guard form["confirmed"] == "yes" else {
            let hidden = form.carried.map { H.hidden($0.name, $0.value) }.joined()
            return H.page(
                title: "Confirm", current: nil, signedIn: true,
                body: """
                    <p class="notice">\(description)</p>
                    \(H.form(action: "/console/actions/\(H.segment(action))", csrf: csrf, fields: hidden + H.hidden("confirmed", "yes"), button: "Confirm", danger: Self.destructive.contains(action)))
                    <p><a href="\(back)">Cancel</a></p>
                    """)
        }
        do {
            if action == "create-enroll-key" {
                let created = try await createEnrollmentKey(form)
                control.logger.notice("console action done", metadata: ["action": "\(action)"])
                return ConsolePages.keyCreated(created)
            }
            let message = try await perform(action, form)
            control.logger.notice("console action done", metadata: ["action": "\(action)"])
            return ConsolePages.outcome(title: "Done", message: message, back: back)
        } catch let error as AdminError {
            return ConsolePages.outcome(title: "Refused", message: error.message + (error.hint.map { " (\($0))" } ?? ""), error: true, back: back)
        } catch {
            return ConsolePages.outcome(title: "Failed", message: "\(error)", error: true, back: back)
        }
    }

    static let destructive: Set<String> = ["remote-action", "restore", "terminate-sync", "revoke", "revoke-enroll-key", "revoke-device", "remove-device"]

    /// Where the outcome's "Back" leads: the partition, the device, or the page of the action.
    static func back(_ action: String, _ form: ConsoleActionForm) -> String {
        if action == remoteAction { return remoteBack(form) }
        if let partition = form["partition"] { return "/console/partitions/\(H.segment(partition))" }
        if let id = form["device-id"], !id.isEmpty, action != "remove-device" { return "/console/devices/\(H.segment(id))" }
        if identityActions.contains(action) { return "/console/enrollment" }
        return "/console/partitions"
    }

    /// What the action will do, in words; nil for an unknown action or missing fields.
    static func describe(_ action: String, _ form: ConsoleActionForm) -> String? {
        func field(_ name: String) -> String? { form[name].flatMap { $0.isEmpty ? nil : $0 } }
        switch action {
        case "snapshot":
            return field("partition").map { "Take a snapshot of partition \($0)'s current state." }
        case "restore":
            guard let p = field("partition"), let s = field("snapshot"), let mode = field("mode"), RestoreMode(rawValue: mode) != nil else { return nil }
            return "Restore partition \(p) to snapshot \(s): versions after it are dropped and every device that synced past it resets"
                + (mode == "heal" ? "; devices give back what the restore drops." : "; what the restore drops stays lost.")
        case "terminate-sync":
            return "Terminate sync: every device's sync identity is forgotten (all partitions); devices retry until sync is enabled again, then reset."
        case "enable-sync":
            return "Enable sync again: devices known before the termination reset."
        case "grant":
            guard let u = field("user"), let p = field("pattern"), let a = field("access"), PartitionAccess(rawValue: a) != nil else { return nil }
            return "Grant user \(u) \(a) access to \(p); bound sessions whose access changes bind again."
        case "revoke":
            guard let u = field("user"), let p = field("pattern") else { return nil }
            return "Revoke user \(u)'s grant \(p); bound sessions that lose access get error 206."
        default:
            return describeIdentity(action, field)
        }
    }

    private func perform(_ action: String, _ form: ConsoleActionForm) async throws -> String {
        let value = { (name: String) in form[name] ?? "" }
        switch action {
        case "snapshot":
            let s = try await control.snapshot(value("partition"))
            return "Snapshot \(s.snapshot) of \(s.partition) taken at version \(s.serverVersion)."
        case "restore":
            let r = try await control.restore(value("partition"), to: value("snapshot"), mode: RestoreMode(rawValue: value("mode")))
            return "\(r.partition) restored to snapshot \(r.snapshot) (version \(r.serverVersion), \(r.mode.rawValue)); \(r.sessionsNotified) bound sessions told to bind again."
        case "terminate-sync":
            let s = try await control.terminateSync()
            return "Sync terminated: \(s.clientFilesForgotten) sync identities forgotten, \(s.sessionsNotified) sessions told."
        case "enable-sync":
            _ = try await control.enableSync()
            return "Sync enabled."
        case "grant":
            let g = try await control.grant(user: value("user"), pattern: value("pattern"), access: PartitionAccess(rawValue: value("access")))
            return "User \(g.user) has \(g.access ?? "no") access to \(g.pattern); \(g.sessionsNotified) sessions told."
        case "revoke":
            let g = try await control.grant(user: value("user"), pattern: value("pattern"), access: nil)
            return "User \(g.user)'s grant \(g.pattern) revoked; \(g.sessionsNotified) sessions told."
        case Self.remoteAction:
            return try await performRemote(form)
        default:
            return try await performIdentity(action, form)
        }
    }
}
