import ArgumentParser
import Foundation
import TetherProtocol
import TetherServer

/// `tether-server admin enroll-key create|list|revoke` (docs/server.md "Enrollment").
struct AdminEnrollKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enroll-key", abstract: "Enrollment keys: devices that hold one enroll themselves.",
        subcommands: [AdminEnrollKeyCreate.self, AdminEnrollKeyList.self, AdminEnrollKeyRevoke.self])
    @ParentCommand var admin: AdminCommand
}

struct AdminEnrollKeyCreate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create an enrollment key and print it once (the server keeps only its digest).",
        discussion: """
            The key (tek1.<id>.<secret>, 256 random bits) is printed on stdout only: put it in the \
            devices' /etc/tether/enroll.key (mode 0600, owner tether; [server] enrollment_key_file). \
            Without --uses or --reusable the key enrolls one device.
            """)
    @ParentCommand var enrollKey: AdminEnrollKey
    var admin: AdminCommand { enrollKey.admin }

    @Option(name: .customLong("tag"), help: "A tag K=V every device the key enrolls gets (repeat for more).")
    var tags: [String] = []

    @Option(name: .long, help: "How many devices the key may enroll (default 1).")
    var uses: Int?

    @Flag(name: .long, help: "Enroll any number of devices until it expires or is revoked.")
    var reusable = false

    @Option(name: .long, help: "Stop enrolling after this long (90s, 30m, 24h, 7d); default: never.")
    var expires: String?

    @Option(name: .long, help: "A note for people (who it is for).")
    var note: String = ""

    func validate() throws {
        if reusable, uses != nil { throw ValidationError("give --uses N or --reusable, not both") }
        if let uses, uses < 1 { throw ValidationError("--uses: at least 1") }
        if let expires, (DurationText.seconds(expires) ?? 0) == 0 {
            throw ValidationError("--expires: \(expires.debugDescription) is not a duration such as 90s, 30m, 24h or 7d")
        }
        let edit: TagEdit
        do throws(TagProblem) {
            edit = try TagEdit.parse(tags)
        } catch {
            throw ValidationError("--tag: \(error.description) (\(TagProblem.hint))")
        }
        if let key = edit.remove.sorted().first { throw ValidationError("--tag: \(key)= has no value; a key's tags are K=V") }
    }

    func run() async throws {
        let edit = try TagEdit.parse(tags)
        let request = AdminAPI.EnrollmentKeyCreate(
            tags: edit.set, uses: uses, reusable: reusable, expiresSeconds: expires.flatMap(DurationText.seconds), note: note)
        try await admin.perform({ try await $0.createEnrollmentKey(request) }) { created in
            printError("tether-server: enrollment key \(created.enrollmentKey.id) created (\(AdminEnrollKeyList.terms(created.enrollmentKey))); "
                + "it is shown this once: put it in the devices' enrollment_key_file (mode 0600)")
            return created.key
        }
    }
}

struct AdminEnrollKeyList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Enrollment keys, newest first, with their state and uses.")
    @ParentCommand var enrollKey: AdminEnrollKey

    func run() async throws {
        try await enrollKey.admin.perform({ try await $0.enrollmentKeys() }) { list in
            guard !list.keys.isEmpty else { return "no enrollment keys" }
            let rows = list.keys.map { k -> [String] in
                [k.id, k.state, k.usesAllowed.map { "\(k.usesSpent)/\($0)" } ?? "\(k.usesSpent)/-", k.expiresAt ?? "never",
                 TagEdit.describe(k.tags), k.createdAt, k.createdBy, k.note.isEmpty ? "-" : k.note]
            }
            return AdminTable.render(["KEY", "STATE", "USES", "EXPIRES", "TAGS", "CREATED", "BY", "NOTE"], rows)
        }
    }

    /// A key's terms in words: its tags, uses and expiry.
    static func terms(_ k: AdminAPI.EnrollmentKey) -> String {
        TerminalText.safe([
            "tags \(TagEdit.describe(k.tags))", k.usesAllowed.map { "\($0) use\($0 == 1 ? "" : "s")" } ?? "reusable",
            k.expiresAt.map { "expires \($0)" } ?? "does not expire",
        ].joined(separator: ", "))
    }
}

struct AdminEnrollKeyRevoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke", abstract: "Revoke an enrollment key: it enrolls no more devices (those it enrolled keep working).")
    @ParentCommand var enrollKey: AdminEnrollKey
    @Argument(help: "The key's id (16 hex digits, as enroll-key list shows it).") var id: String

    func run() async throws {
        try await enrollKey.admin.perform({ try await $0.revokeEnrollmentKey(id) }) { k in
            "enrollment key \(TerminalText.safe(k.id)) revoked after \(k.usesSpent) enrollments"
        }
    }
}

/// A text table: every cell shown safe (TerminalText), columns as wide as their widest cell.
enum AdminTable {
    static func render(_ headers: [String], _ rows: [[String]]) -> String {
        let all = ([headers] + rows).map { $0.map(TerminalText.safe) }
        let widths = headers.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { cells in
            zip(cells, widths).map { $0.padding(toLength: $1 + 2, withPad: " ", startingAt: 0) }.joined().trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }
}
