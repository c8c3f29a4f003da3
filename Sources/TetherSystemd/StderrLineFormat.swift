import Logging

/// The one-line format of a log record on stderr:
///
///     2026-11-22T16:20:00.123Z warn  [tether.error_code=203 tether.partition=store-17] message
///
/// Timestamp in UTC, the Tether level padded to five characters, the metadata (flattened,
/// sorted by key) in brackets when there is any, then the message. Line breaks, tabs, other
/// control characters and backslashes are escaped (`\n`, `\t`, `\u{1B}`, `\\`) so every record
/// is exactly one line; there are no colours.
package enum StderrLineFormat {
    package static func line(
        timestamp: LogTimestamp, level: TetherLogLevel, metadata: Logger.Metadata, message: String
    ) -> String {
        let name = level.rawValue
        var line = timestamp.description + " " + name + String(repeating: " ", count: max(1, 6 - name.count))
        let pairs = MetadataFlattening.flatten(metadata)
        if !pairs.isEmpty {
            line += "[" + pairs.map { "\(escape($0.key))=\(quoteIfNeeded($0.value))" }.joined(separator: " ") + "] "
        }
        line += escape(message)
        return line
    }

    /// The text with line breaks, tabs, other control characters and backslashes escaped.
    package static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case "\\": escaped += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// A metadata value, in double quotes when it is empty or holds a space, quote or bracket.
    static func quoteIfNeeded(_ value: String) -> String {
        let escaped = escape(value)
        let needsQuotes = escaped.isEmpty || escaped.contains { $0 == " " || $0 == "\"" || $0 == "]" || $0 == "[" }
        guard needsQuotes else { return escaped }
        return "\"" + escaped.replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
