import Foundation

/// The keys a configuration document names, as dotted paths without array indices
/// (`server.url`, `partition.reset.mode`), for the test that holds the reference page, the
/// example file and the man(5) page to the keys the reader accepts.
package enum ConfigurationDocuments {
    /// The repository's root (this file is `Sources/TetherTestSupport/…`).
    package static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    package static func read(_ relative: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(relative), encoding: .utf8)
    }

    /// The Markdown reference tables under `sections` (a heading line, and the table a bare key
    /// belongs to there: `"### Limits": "limits"`), up to the next heading: the backquoted names
    /// in each row's first cell, `key`, `[table] key` or `[[table]] key` (`[t] …`, "any key of
    /// t", gives `t.*`).
    package static func markdownKeys(_ text: String, sections: [String: String]) -> Set<String> {
        var keys: Set<String> = []
        var table: String? = nil
        for line in text.split(separator: "\n") {
            if line.hasPrefix("#") {
                table = sections[String(line)]
                continue
            }
            guard let table, line.hasPrefix("| `") else { continue }
            let cell = line.dropFirst(2).prefix { $0 != "|" }
            let names = cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
                .map { String($0.element) }
            for name in names {
                let words = name.split(separator: " ")
                if words.count == 2, words[0].hasPrefix("[") {
                    let named = words[0].trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                    keys.insert(named + "." + (words[1] == "…" ? "*" : words[1]))
                } else if words.count == 1, !name.hasPrefix("[") {
                    keys.insert(table.isEmpty ? name : table + "." + name)
                }
            }
        }
        return keys
    }

    /// An example TOML file: every `key =`, commented out or not, under the table header
    /// (commented out or not) it follows.
    package static func exampleKeys(_ text: String) -> Set<String> {
        var keys: Set<String> = []
        var table = ""
        for raw in text.split(separator: "\n") {
            var line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#") { line = line.dropFirst().trimmingCharacters(in: .whitespaces) }
            if line.hasPrefix("[") {
                let header = line.prefix { $0 != "#" }.trimmingCharacters(in: .whitespaces)
                table = header.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty, key.allSatisfy({ $0.isLowercase || $0 == "_" || $0.isNumber }) else { continue }
            keys.insert(table.isEmpty ? key : table + "." + key)
        }
        return keys
    }

    /// A man(5) page: the keys of each `.TP` paragraph's first line (`.B key`, or `.BR a ", "
    /// b " (default " …`), in the table its `.SH` section names (`KEYS` and `TOP-LEVEL KEYS`:
    /// none; `[reset] AND [partition.reset]`: both).
    package static func manKeys(_ text: String) -> Set<String> {
        var keys: Set<String> = []
        var tables: [String] = [""]
        var afterTP = false
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            if line.hasPrefix(".SH ") {
                let title = line.dropFirst(4)
                let named = title.split(separator: " ").filter { $0.hasPrefix("[") }.map {
                    $0.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                }
                tables = named.isEmpty ? (title.contains("KEYS") ? [""] : []) : named
                afterTP = false
                continue
            }
            if line == ".TP" {
                afterTP = true
                continue
            }
            guard afterTP else { continue }
            afterTP = false
            guard line.hasPrefix(".B ") || line.hasPrefix(".BR ") else { continue }
            let body = line.drop { $0 != " " }.dropFirst()
            // Outside the quotes: the first word, and each word right after a `", "` separator.
            let segments = body.split(separator: "\"", omittingEmptySubsequences: false).map(String.init)
            var names: [String] = []
            for (index, segment) in segments.enumerated() where index % 2 == 0 {
                let word = segment.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? ""
                if index == 0 || segments[index - 1] == ", " { names.append(word) }
            }
            for name in names where !name.isEmpty && !name.hasPrefix("[") {
                for table in tables { keys.insert(table.isEmpty ? name : table + "." + name) }
            }
        }
        return keys
    }

    /// The keys of `accepted` none of `documented` covers; `t.*` covers every key of `t`, and a
    /// key of `partition.reset` or `partition.events` is covered by the same key of `reset` or
    /// `events` (they inherit those tables' keys).
    package static func missing(_ accepted: [String], in documented: Set<String>) -> [String] {
        accepted.filter { key in
            if documented.contains(key) { return false }
            let parts = key.split(separator: ".").map(String.init)
            for cut in 1..<max(parts.count, 1) where documented.contains(parts[..<cut].joined(separator: ".") + ".*") { return false }
            for inherited in ["partition.reset.", "partition.events."] where key.hasPrefix(inherited) {
                if documented.contains(String(key.dropFirst("partition.".count))) { return false }
            }
            return true
        }
    }
}
