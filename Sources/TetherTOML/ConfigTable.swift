/// One table of a configuration file, read through typed accessors that record problems
/// (wrong type, missing required key, bad value) in the ``ConfigParser`` and mark keys read.
package final class ConfigTable {
    /// Dotted path of this table: `""` for the root, `server`, `partition[1].reset`.
    package let path: String
    let entries: [String: TOMLNode]
    weak var parser: ConfigParser?

    init(path: String, entries: [String: TOMLNode]) {
        self.path = path
        self.entries = entries
    }

    private func child(_ parser: ConfigParser, path: String, entries: [String: TOMLNode]) -> ConfigTable {
        let table = ConfigTable(path: path, entries: entries)
        table.parser = parser
        table.registerKeys()
        return table
    }

    func registerKeys() {
        for key in entries.keys { parser?.register(keyPath(key)) }
    }

    /// The dotted path of `key` in this table, for messages.
    package func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    package func has(_ key: String) -> Bool { entries[key] != nil }

    /// Records a problem at `key` of this table.
    package func problem(_ key: String, _ message: String) { parser?.problem(keyPath(key), message) }

    /// The raw node of a value key of several possible types (a name or a number), marked asked
    /// for (``ConfigParser/askedKeys``) and read; the caller checks its type.
    package func value(_ key: String) -> TOMLNode? { leaf(key) }

    /// The node of a value key (not a table), marked asked for (``ConfigParser/askedKeys``) and read.
    private func leaf(_ key: String) -> TOMLNode? {
        parser?.markAsked(keyPath(key))
        return node(key)
    }

    /// The raw node, marked read.
    package func node(_ key: String) -> TOMLNode? {
        guard let node = entries[key] else { return nil }
        parser?.markRead(keyPath(key))
        return node
    }

    private func missing(_ key: String, required: Bool, expected: String) {
        if required { problem(key, "missing required key (\(expected))") }
    }

    private func wrongType(_ key: String, _ node: TOMLNode, expected: String) {
        problem(key, "expected \(expected), found \(node.typeName)")
    }

    package func string(_ key: String, required: Bool = false) -> String? {
        guard let node = leaf(key) else { missing(key, required: required, expected: "a string"); return nil }
        guard case .string(let value) = node else { wrongType(key, node, expected: "a string"); return nil }
        return value
    }

    package func integer(_ key: String, required: Bool = false, range: ClosedRange<Int>? = nil) -> Int? {
        guard let node = leaf(key) else { missing(key, required: required, expected: "an integer"); return nil }
        guard case .integer(let value) = node else { wrongType(key, node, expected: "an integer"); return nil }
        if let range, !range.contains(value) {
            problem(key, "\(value) is out of range \(range.lowerBound)...\(range.upperBound)")
            return nil
        }
        return value
    }

    package func bool(_ key: String, required: Bool = false) -> Bool? {
        guard let node = leaf(key) else { missing(key, required: required, expected: "true or false"); return nil }
        guard case .bool(let value) = node else { wrongType(key, node, expected: "true or false"); return nil }
        return value
    }

    /// A string that must be one of `E`'s raw values.
    package func enumeration<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type, required: Bool = false) -> E?
    where E.RawValue == String {
        guard let raw = string(key, required: required) else { return nil }
        guard let value = E(rawValue: raw) else {
            let names = E.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            problem(key, "\(raw.debugDescription) is not one of \(names)")
            return nil
        }
        return value
    }

    /// An absolute filesystem path (not checked for existence).
    package func absolutePath(_ key: String, required: Bool = false) -> String? {
        guard let value = string(key, required: required) else { return nil }
        guard value.hasPrefix("/") else { problem(key, "\(value.debugDescription) must be an absolute path"); return nil }
        return value
    }

    package func stringArray(_ key: String, required: Bool = false) -> [String]? {
        guard let node = leaf(key) else { missing(key, required: required, expected: "an array of strings"); return nil }
        guard case .array(let items) = node else { wrongType(key, node, expected: "an array of strings"); return nil }
        var result: [String] = []
        for (i, item) in items.enumerated() {
            guard case .string(let value) = item else {
                problem("\(key)[\(i)]", "expected a string, found \(item.typeName)")
                return nil
            }
            result.append(value)
        }
        return result
    }

    /// A sub-table (`[server]`), or nil when absent.
    package func table(_ key: String, required: Bool = false) -> ConfigTable? {
        guard let parser, let node = node(key) else { missing(key, required: required, expected: "a table"); return nil }
        guard case .table(let entries) = node else { wrongType(key, node, expected: "a table"); return nil }
        return child(parser, path: keyPath(key), entries: entries)
    }

    /// The entries of an array of tables (`[[partition]]`), numbered `partition[0]`, `partition[1]`…
    package func tables(_ key: String) -> [ConfigTable] {
        guard let parser, let node = node(key) else { return [] }
        guard case .array(let items) = node else { wrongType(key, node, expected: "an array of tables"); return [] }
        var result: [ConfigTable] = []
        for (i, item) in items.enumerated() {
            guard case .table(let entries) = item else {
                problem("\(key)[\(i)]", "expected a table, found \(item.typeName)")
                continue
            }
            result.append(child(parser, path: "\(keyPath(key))[\(i)]", entries: entries))
        }
        return result
    }

    /// Every key of this table, sorted (for tables whose keys are names, like `[tables]`).
    package var keys: [String] { entries.keys.sorted() }
}
