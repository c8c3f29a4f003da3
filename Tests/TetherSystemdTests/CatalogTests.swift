import Foundation
import Logging
import Testing
import TetherSystemd
import TetherTestSupport

/// The journald catalog (`systemd/catalog/tether.catalog`, installed by `make install`): it
/// compiles, explains every `TetherMessageID`, and `journalctl -x` shows its text for a record
/// the journal handler sent.
@Suite(.enabled(if: Tool.find("make") != nil && Tool.find("journalctl") != nil, "needs make and journalctl"))
struct CatalogTests {
    /// The journal fields Tether records carry for catalog placeholders (docs/contract.md: Logging), from the
    /// metadata keys the agent logs them with.
    static let placeholderFields = Set(
        ["tether.partition", "tether.reset_id", "tether.error_code", "tether.hook", "tether.cause"].compactMap(JournalFieldName.sanitize))

    @Test func catalogCompilesAndListsEveryMessageID() async throws {
        let installed = try await Installation.shared()
        let root = try await CatalogRoot.make(catalog: installed.path(Installation.catalogdir + "/tether.catalog"))
        let ids = try TetherMessageIDSource.load()
        #expect(ids.count == 9, "\(ids)")

        let list = try await ChildProcess.run(try Tool.path("journalctl"), ["--root=\(root.path)", "--list-catalog"])
        #expect(list.succeeded, "\(list)")
        // "<id> tether: <subject>", one line per entry; only our entries are in this root.
        var listed: [String: String] = [:]
        for line in list.standardOutput.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            #expect(parts.count == 3 && parts[1] == "tether:", "\(line)")
            if parts.count == 3 { listed[parts[0]] = parts[2] }
        }
        #expect(Set(listed.keys) == Set(ids.values), "listed \(listed.keys.sorted()), TetherMessageID has \(ids)")
        for (name, id) in ids {
            let subject = listed[id]
            // journalctl lists an entry without a Subject: header as "n/a".
            #expect(subject != nil && subject != "n/a" && subject?.hasPrefix("Tether ") == true, "\(name): \(subject ?? "missing")")
        }
    }

    @Test func catalogEntriesAreCompleteAndUseOnlyFieldsTetherSends() async throws {
        let installed = try await Installation.shared()
        let entries = try CatalogEntry.parse(path: installed.path(Installation.catalogdir + "/tether.catalog"))
        #expect(entries.count == 9)
        #expect(Set(entries.map(\.id)).count == entries.count, "an id appears twice")
        for entry in entries {
            #expect(entry.header("Defined-By") == "tether", "\(entry.id)")
            #expect(entry.header("Support")?.hasPrefix("file:" + Installation.docdir + "/") == true, "\(entry.id)")
            #expect(entry.body.contains { !$0.isEmpty }, "\(entry.id) has no text")
            let unknown = entry.placeholders.subtracting(Self.placeholderFields)
            #expect(unknown.isEmpty, "\(entry.id) uses @\(unknown.sorted())@, which no Tether record carries")
        }
    }

    /// A record sent through `JournalLogHandler` into the real journald, shown by `journalctl -x`
    /// with the catalog text and its placeholders filled in.
    ///
    /// `journalctl -x` always reads the real root's database (/var/lib/systemd/catalog/database);
    /// `--root`/`--directory` do not change that in systemd 252. Instead of installing our
    /// catalog into the machine's /usr/lib/systemd/catalog (a lasting change to the machine, and
    /// a race with an operator's `make install`), the database is built from exactly the
    /// installed file with `journalctl --root=<tmp> --update-catalog` and bind-mounted over
    /// /var/lib/systemd in a private mount namespace (`unshare --mount`) that only this
    /// journalctl sees; the journal itself (/run/log/journal) is untouched.
    @Test(.enabled(if: geteuid() == 0 && Tool.find("unshare") != nil, "needs root and unshare (a private mount namespace)"),
          .enabled(if: Journald.isAvailable, "needs a running journald, or root to start /lib/systemd/systemd-journald"),
          .enabled(if: FileManager.default.fileExists(atPath: "/var/lib/systemd"), "needs /var/lib/systemd to mount over"))
    func journalctlExplainsAResetStartedRecord() async throws {
        try await Journald.ensureRunning()
        let installed = try await Installation.shared()
        let catalog = installed.path(Installation.catalogdir + "/tether.catalog")
        let root = try await CatalogRoot.make(catalog: catalog)
        let resetStarted = try #require(try TetherMessageIDSource.load()["resetStarted"])

        let suffix = UUID().uuidString.prefix(8).lowercased()
        let identifier = "tether-catalog-\(suffix)"
        let partition = "store-\(suffix)"
        let resetID = String(UInt64.random(in: 1...UInt64.max), radix: 16)
        let logger = Logger(label: "tether.test") {
            JournalLogHandler(label: $0, identifier: identifier, levelBox: LogLevelBox(.info))
        }
        logger.notice(
            "client reset started",
            metadata: [
                "message_id": .string(resetStarted), "tether.partition": .string(partition),
                "tether.reset_id": .string(resetID), "tether.error_code": "211",
            ])
        let record = try await eventually("the record of \(identifier)") {
            try await Journald.records(identifier: identifier).first
        }
        #expect(record["MESSAGE_ID"] == resetStarted && record["TETHER_PARTITION"] == partition)

        let result = try await ChildProcess.run(
            try Tool.path("unshare"),
            [
                "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
                #"mount --bind "$1" /var/lib/systemd && exec journalctl -x --no-pager -q -o short "SYSLOG_IDENTIFIER=$2""#,
                "sh", root.path + "/var/lib/systemd", identifier,
            ],
            timeout: .seconds(30))
        try #require(result.succeeded, "\(result)")

        // The record's line, then the explanation, each line prefixed "░░ " (or "-- " when the
        // locale is not UTF-8).
        var lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while lines.last == "" { lines.removeLast() }
        try #require(lines.first?.hasSuffix("\(identifier)[\(getpid())]: client reset started") == true, "\(result.standardOutput)")
        let explanation = lines.dropFirst().map { line -> String in
            for prefix in ["░░", "--"] where line.hasPrefix(prefix) {
                return String(line.dropFirst(prefix.count).drop { $0 == " " })
            }
            return "not an explanation line: " + line
        }

        let entry = try #require(try CatalogEntry.parse(path: catalog).first { $0.id == resetStarted })
        let expected = entry.text(with: [
            "TETHER_PARTITION": partition, "TETHER_RESET_ID": resetID, "TETHER_ERROR_CODE": "211",
        ])
        #expect(expected.contains { $0.contains(partition) } && !expected.contains { $0.contains("@TETHER_") })
        #expect(explanation == expected, "journalctl -x printed:\n\(result.standardOutput)")
        #expect(explanation.first == "Subject: Tether client reset of partition \(partition) started")
    }
}

/// A temporary root whose /usr/lib/systemd/catalog holds one catalog file, compiled with
/// `journalctl --root=<root> --update-catalog` into <root>/var/lib/systemd/catalog/database.
struct CatalogRoot: Sendable {
    private let directory: TemporaryDirectory
    var path: String { directory.path }

    /// Copies `catalog` into a new root and builds the database; the update must succeed,
    /// print nothing and write the database.
    static func make(catalog: String) async throws -> CatalogRoot {
        let root = CatalogRoot(directory: try TemporaryDirectory(prefix: "tether-catalog"))
        let target = root.path + Installation.catalogdir
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: catalog, toPath: target + "/tether.catalog")
        let result = try await ChildProcess.run(try Tool.path("journalctl"), ["--root=\(root.path)", "--update-catalog"])
        guard result.succeeded, result.standardOutput.isEmpty, result.standardError.isEmpty else {
            throw TestSupportError("journalctl --update-catalog: \(result)")
        }
        guard FileManager.default.fileExists(atPath: root.path + "/var/lib/systemd/catalog/database") else {
            throw TestSupportError("journalctl --update-catalog wrote no database under \(root.path)")
        }
        return root
    }
}

/// One entry of a catalog file: `-- <id>`, header lines, an empty line, the text.
struct CatalogEntry {
    var id: String
    var headers: [(name: String, value: String)]
    var body: [String]

    func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }

    /// Every `@NAME@` of the headers and the text.
    var placeholders: Set<String> {
        let text = (headers.map(\.value) + body).joined(separator: "\n")
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        // Between two @: odd-numbered pieces are names when they look like field names.
        return Set(
            stride(from: 1, to: parts.count - 1, by: 2).map { String(parts[$0]) }
                .filter { !$0.isEmpty && $0.allSatisfy { $0.isUppercase || $0.isNumber || $0 == "_" } })
    }

    /// The entry as journalctl -x prints it: headers, an empty line, the text; placeholders
    /// replaced by `fields`.
    func text(with fields: [String: String]) -> [String] {
        let lines = headers.map { "\($0.name): \($0.value)" } + [""] + body
        return lines.map { line in
            fields.reduce(line) { $0.replacingOccurrences(of: "@\($1.key)@", with: $1.value) }
        }
    }

    static func parse(path: String) throws -> [CatalogEntry] {
        var entries: [CatalogEntry] = []
        var inHeaders = false
        for raw in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            if line.hasPrefix("-- ") {
                entries.append(CatalogEntry(id: String(line.dropFirst(3)), headers: [], body: []))
                inHeaders = true
            } else if entries.isEmpty {
                continue  // comments before the first entry
            } else if inHeaders {
                if line.isEmpty {
                    inHeaders = false
                } else if let colon = line.firstIndex(of: ":") {
                    entries[entries.count - 1].headers.append(
                        (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
                }
            } else {
                entries[entries.count - 1].body.append(line)
            }
        }
        for index in entries.indices {
            while entries[index].body.last == "" { entries[index].body.removeLast() }
        }
        return entries
    }
}

/// The ids of `TetherMessageID` (Sources/TetherAgent/Logging/TetherMessageID.swift), read from
/// its source: this test target does not depend on TetherAgent (Package.swift), and reading the
/// enum's source keeps the catalog checked against the real ids rather than a copy.
enum TetherMessageIDSource {
    /// Case name → 32 hex digits.
    static func load() throws -> [String: String] {
        let path = PackageRoot.appending("Sources/TetherAgent/Logging/TetherMessageID.swift")
        let source = try String(contentsOfFile: path, encoding: .utf8)
        var ids: [String: String] = [:]
        for line in source.split(separator: "\n") {
            let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
            guard words.count == 4, words[0] == "case", words[2] == "=" else { continue }
            let value = words[3].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            guard value.count == 32, value.allSatisfy(\.isHexDigit) else {
                throw TestSupportError("\(path): \(line) is not a 32-hex-digit id")
            }
            ids[String(words[1])] = value
        }
        guard !ids.isEmpty else { throw TestSupportError("no `case name = \"id\"` lines in \(path)") }
        return ids
    }
}
