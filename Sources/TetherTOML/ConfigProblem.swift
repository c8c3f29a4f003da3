/// One thing wrong with a configuration file, naming the file, the key and the line.
package struct ConfigProblem: Sendable, Hashable, CustomStringConvertible {
    package var file: String
    /// Dotted key path, `partition[1].reset.mode`; empty for a whole-file problem.
    package var key: String
    package var line: Int?
    package var message: String

    package init(file: String, key: String, line: Int?, message: String) {
        self.file = file
        self.key = key
        self.line = line
        self.message = message
    }

    /// `tetherd.toml:12: partition[1].reset.mode: unknown mode "x"; expected one of …`
    package var description: String {
        let location = line.map { "\(file):\($0)" } ?? file
        return key.isEmpty ? "\(location): \(message)" : "\(location): \(key): \(message)"
    }
}

/// A configuration file that cannot be used: every problem found, one line each.
package struct ConfigError: Error, Sendable, CustomStringConvertible {
    package var problems: [ConfigProblem]
    package init(_ problems: [ConfigProblem]) { self.problems = problems }
    package init(file: String, key: String = "", line: Int? = nil, _ message: String) {
        self.problems = [ConfigProblem(file: file, key: key, line: line, message: message)]
    }
    package var description: String { problems.map(\.description).joined(separator: "\n") }
    /// What an operator can do about it.
    package var hint: String { "fix the lines named above; `--check-config` validates a file without starting" }
}
