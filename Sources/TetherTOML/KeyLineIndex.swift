/// Maps dotted key paths of a TOML text to the line that defines them.
///
/// TOMLKit gives no positions for values, so this scans the text the way a reader does:
/// `[table]` and `[[array]]` headers set the current prefix (array elements are numbered,
/// `partition[1]`), and `key = …` lines add a key. Multi-line strings are skipped.
/// It only has to be right for well-formed files: TOMLKit has already parsed them.
package struct KeyLineIndex: Sendable {
    private var lines: [String: Int] = [:]

    package init(text: String) {
        var prefix: [String] = []
        var arrayCounts: [String: Int] = [:]
        var inMultiline: String? = nil
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: " \t\r")
            if let delimiter = inMultiline {
                if line.contains(delimiter) { inMultiline = nil }
                continue
            }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[[") {
                let name = Self.keyPath(line.dropFirst(2).prefix { $0 != "]" })
                let dotted = name.joined(separator: ".")
                let index = arrayCounts[dotted, default: -1] + 1
                arrayCounts[dotted] = index
                prefix = Self.resolve(name, arrayCounts: arrayCounts)
                lines[prefix.joined(separator: "."), default: number + 1] = number + 1
            } else if line.hasPrefix("[") {
                let name = Self.keyPath(line.dropFirst().prefix { $0 != "]" })
                prefix = Self.resolve(name, arrayCounts: arrayCounts)
                lines[prefix.joined(separator: "."), default: number + 1] = number + 1
            } else if let eq = Self.assignment(line) {
                let key = (prefix + Self.keyPath(line[..<eq])).joined(separator: ".")
                lines[key, default: number + 1] = number + 1
                let value = line[line.index(after: eq)...].trimmingCharacters(in: " \t")
                for delimiter in ["\"\"\"", "'''"] where value.hasPrefix(delimiter) {
                    if !value.dropFirst(3).contains(delimiter) { inMultiline = delimiter }
                }
            }
        }
    }

    /// The line of `key`, or of its closest enclosing table.
    package func line(of key: String) -> Int? {
        var path = key
        while true {
            if let line = lines[path] { return line }
            guard let cut = path.lastIndex(where: { $0 == "." || $0 == "[" }) else { return nil }
            path = String(path[..<cut])
        }
    }

    /// Header names are resolved against earlier array tables: `[partition.reset]` after the
    /// second `[[partition]]` is `partition[1].reset`.
    private static func resolve(_ name: [String], arrayCounts: [String: Int]) -> [String] {
        var result: [String] = []
        var dotted: [String] = []
        for part in name {
            dotted.append(part)
            if let index = arrayCounts[dotted.joined(separator: ".")] {
                result.append("\(part)[\(index)]")
            } else {
                result.append(part)
            }
        }
        return result
    }

    private static func keyPath(_ text: Substring) -> [String] {
        text.split(separator: ".").map {
            $0.trimmingCharacters(in: " \t").trimmingCharacters(in: "\"'")
        }
    }

    /// Index of the `=` of a `key = value` line, ignoring `=` inside quoted keys.
    private static func assignment(_ line: String) -> String.Index? {
        var quote: Character? = nil
        for index in line.indices {
            let c = line[index]
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "\"" || c == "'" {
                quote = c
            } else if c == "=" {
                return index
            }
        }
        return nil
    }
}

extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        let chars = Set(set)
        var s = Substring(self)
        while let first = s.first, chars.contains(first) { s = s.dropFirst() }
        while let last = s.last, chars.contains(last) { s = s.dropLast() }
        return String(s)
    }
}
