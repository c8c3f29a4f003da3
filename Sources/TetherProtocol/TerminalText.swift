/// Text a server or a device sent (a server's software string, an error message, a device's
/// name, release or state), made safe to print on an operator's terminal: every character that
/// could move the cursor, clear the screen, start an escape sequence, begin a forged line or
/// reorder what follows is shown escaped instead — `\n`, `\r`, `\t`, `\e`, and `\u{XX}` for the
/// others. Ordinary text, non-ASCII letters included, is left as it is.
///
/// Escaped (``needsEscape(_:)``): the C0 controls U+0000–U+001F, DEL U+007F, the C1 controls
/// U+0080–U+009F (U+009B is a one-character CSI on some terminals), the line and paragraph
/// separators U+2028 and U+2029, and the bidirectional formatting characters — the embeddings
/// and overrides U+202A–U+202E, the isolates U+2066–U+2069 and the marks U+200E, U+200F and
/// U+061C — which can make a line read other than what it holds.
///
/// Used by `tetherctl` and `tether-server admin` for every text-mode output of such data; JSON
/// output is escaped by its encoder instead.
package enum TerminalText {
    /// `text` with every character of ``needsEscape(_:)`` escaped; `text` itself when it holds none.
    package static func safe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                out.append(contentsOf: escape(scalar).unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// True for the characters ``safe(_:)`` escapes.
    package static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x2028, 0x2029: true
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: true
        default: false
        }
    }

    /// The visible form of one escaped character.
    static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        case "\u{1B}": return "\\e"
        default:
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "\\u{" + (hex.count < 2 ? "0" + hex : hex) + "}"
        }
    }
}
