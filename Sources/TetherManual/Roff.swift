import Foundation

/// Text made safe for roff (man(7)): backslashes and hyphens escaped, and no line that starts
/// with a control character.
package enum Roff {
    /// Escapes running text. Blank lines become paragraph breaks.
    package static func text(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line -> String in
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                return trimmed.isEmpty ? ".PP" : escapeLine(trimmed)
            }
            .joined(separator: "\n")
    }

    /// Escapes one line: `\` → `\e`, `-` → `\-`, a leading `.` or `'` guarded by `\&`.
    package static func escapeLine(_ line: String) -> String {
        var out = ""
        for character in line {
            switch character {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            default: out.append(character)
            }
        }
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }

    /// Bold text, for the words a user types.
    package static func bold(_ text: String) -> String { "\\fB\(escapeLine(text))\\fR" }

    /// Italic text, for a value the user chooses.
    package static func italic(_ text: String) -> String { "\\fI\(escapeLine(text))\\fR" }
}
