import Foundation
import HTTPTypes

/// The console's enrollment actions: create and revoke an enrollment key; change a device's
/// tags, rotate its credential, revoke or remove it. Done as `console` (the audit's actor).
extension ConsoleActions {
    static let actor = "console"
    static let identityActions: Set<String> = [
        "create-enroll-key", "revoke-enroll-key", "tag-device", "rotate-device", "revoke-device", "remove-device",
    ]

    /// What an enrollment action will do, in words; nil for an unknown action or missing fields.
    static func describeIdentity(_ action: String, _ field: (String) -> String?) -> String? {
        switch action {
        case "create-enroll-key":
            let uses = field("reusable") == "yes" ? "any number of devices" : field("uses").map { "\($0) device(s)" } ?? "one device"
            return "Create an enrollment key for \(uses), tags \(field("tags") ?? "none"), "
                + (field("expires").map { "expiring after \($0)" } ?? "not expiring") + ". It is shown once."
        case "revoke-enroll-key":
            return field("key").map { "Revoke enrollment key \($0): it enrolls no more devices; those it enrolled keep working." }
        case "tag-device":
            guard let device = field("device"), let tags = field("tags") else { return nil }
            return "Change device \(device)'s tags: \(tags). Its bound sessions bind again under the grants that follow."
        case "rotate-device":
            return field("device").map { "Hand device \($0) a new credential; the current one works until the device has the new one." }
        case "revoke-device":
            return field("device").map { "Revoke device \($0): its credential is refused and its sessions end at once (error 203)." }
        case "remove-device":
            return field("device").map { "Remove device \($0): it is forgotten, its sessions end (error 203), and its device id may enroll again." }
        default:
            return nil
        }
    }

    func createEnrollmentKey(_ form: ConsoleActionForm) async throws -> AdminAPI.EnrollmentKeyCreated {
        func field(_ name: String) -> String? { form[name].flatMap { $0.isEmpty ? nil : $0 } }
        let edit: TagEdit
        do throws(TagProblem) {
            edit = try TagEdit.parse(Self.items(field("tags") ?? ""))
        } catch {
            throw AdminError.badTag(error)
        }
        if let key = edit.remove.sorted().first { throw AdminError.badTag(TagProblem("tag \(key) has no value")) }
        var uses: Int? = nil
        if let text = field("uses") {
            guard let value = Int(text) else { throw AdminError.badKeyRequest("“Devices it may enroll” is a number", hint: "empty: one device") }
            uses = value
        }
        var expires: Int? = nil
        if let text = field("expires") {
            guard let seconds = DurationText.seconds(text) else {
                throw AdminError.badKeyRequest("“Expires after” takes a duration such as 90s, 30m, 24h or 7d", hint: "empty: it does not expire")
            }
            expires = seconds
        }
        return try await control.createEnrollmentKey(
            AdminAPI.EnrollmentKeyCreate(tags: edit.set, uses: uses, reusable: field("reusable") == "yes", expiresSeconds: expires, note: form["note"] ?? ""),
            actor: Self.actor)
    }

    func performIdentity(_ action: String, _ form: ConsoleActionForm) async throws -> String {
        let device = form["device"] ?? ""
        switch action {
        case "revoke-enroll-key":
            let key = try await control.revokeEnrollmentKey(id: form["key"] ?? "", actor: Self.actor)
            return "Enrollment key \(key.id) revoked after \(key.usesSpent) enrollments."
        case "tag-device":
            let edit: TagEdit
            do throws(TagProblem) {
                edit = try TagEdit.parse(Self.items(form["tags"] ?? ""))
            } catch {
                throw AdminError.badTag(error)
            }
            let change = try await control.tagDevice(device, edit, actor: Self.actor)
            return "Device \(device) now has tags \(TagEdit.describe(change.identity.tags)); \(change.sessionsNotified) sessions told to bind again."
        case "rotate-device":
            let change = try await control.rotateDevice(device, actor: Self.actor)
            return "Device \(device) was handed a new credential (\(change.sessionsNotified) sessions took it); the current one works until the device has the new one."
        case "revoke-device":
            let change = try await control.revokeDevice(device, actor: Self.actor)
            return "Device \(device) revoked; \(change.sessionsNotified) sessions ended."
        case "remove-device":
            let change = try await control.removeDevice(device, actor: Self.actor)
            return "Device \(device) removed; \(change.sessionsNotified) sessions ended."
        default:
            throw AdminError(.badRequest, "unknown action \(action)")
        }
    }

    /// `K=V` items of a form field, separated by spaces or commas.
    static func items(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\n" || $0 == "\t" || $0 == "\r" }).map(String.init)
    }
}
