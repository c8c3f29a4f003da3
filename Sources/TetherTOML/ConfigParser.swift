/// Reads a TOML configuration file into typed values, collecting every problem with its key
/// and line instead of stopping at the first.
///
/// Keys are marked as they are read; ``finish()`` reports every key nobody read as unknown,
/// so a component's reader is also the list of the keys it accepts.
///
/// ```swift
/// let parser = try ConfigParser(text: text, file: "tetherd.toml")
/// let stateDir = parser.root.string("state_dir") ?? "/var/lib/tether"
/// let partitions = parser.root.tables("partition")
/// try parser.finish()
/// ```
package final class ConfigParser {
    package let file: String
    package let root: ConfigTable
    private let index: KeyLineIndex
    private var problems: [ConfigProblem] = []
    private var read: Set<String> = []
    private var known: [String] = []
    private var asked: [String] = []

    package init(text: String, file: String) throws(ConfigError) {
        self.file = file
        self.index = KeyLineIndex(text: text)
        let entries = try TOMLNode.parse(text, file: file)
        self.root = ConfigTable(path: "", entries: entries)
        self.root.parser = self
        root.registerKeys()
    }

    /// Records a problem at `key` (its line is looked up).
    package func problem(_ key: String, _ message: String) {
        problems.append(ConfigProblem(file: file, key: key, line: index.line(of: key), message: message))
    }

    package func line(of key: String) -> Int? { index.line(of: key) }

    func markRead(_ path: String) { read.insert(path) }

    func markAsked(_ path: String) {
        let general = Self.withoutIndices(path)
        if !asked.contains(general) { asked.append(general) }
    }

    /// Every value key a reader asked for, present or not, in the order asked, as dotted paths
    /// without array indices (`server.url`, `partition.reset.mode`): read with every table
    /// present, it is the list of the keys a component accepts (a test holds the docs to it).
    package var askedKeys: [String] { asked }

    /// `partition[1].reset.mode` → `partition.reset.mode`.
    static func withoutIndices(_ path: String) -> String {
        var result = ""
        var skipping = false
        for character in path {
            if character == "[" { skipping = true } else if character == "]" { skipping = false } else if !skipping { result.append(character) }
        }
        return result
    }

    func register(_ path: String) { known.append(path) }

    /// Problems so far, without the unknown-key check.
    package var currentProblems: [ConfigProblem] { problems }

    /// Throws every problem found, plus one per key that no reader asked for.
    package func finish() throws(ConfigError) {
        var all = problems
        for path in known where !read.contains(path) {
            all.append(ConfigProblem(file: file, key: path, line: index.line(of: path), message: "unknown key"))
        }
        let sorted = all.sorted { ($0.line ?? 0, $0.key) < ($1.line ?? 0, $1.key) }
        if !sorted.isEmpty { throw ConfigError(sorted) }
    }
}
