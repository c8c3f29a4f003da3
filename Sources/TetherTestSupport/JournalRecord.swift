import Foundation

/// One journal entry as `journalctl -o json` prints it.
package struct JournalRecord: Sendable, CustomStringConvertible {
    /// Every field; values journalctl printed as byte arrays (non-printable data) are decoded as
    /// UTF-8, a field present several times keeps its first value.
    package var fields: [String: String]

    package subscript(name: String) -> String? { fields[name] }

    /// Parses one line of `journalctl -o json`.
    package init(jsonLine: String) throws {
        guard let object = try JSONSerialization.jsonObject(with: Data(jsonLine.utf8)) as? [String: Any] else {
            throw TestSupportError("journalctl printed something that is not a JSON object: \(jsonLine)")
        }
        var fields: [String: String] = [:]
        for (name, value) in object {
            if let text = Self.text(value) { fields[name] = text }
        }
        self.fields = fields
    }

    private static func text(_ value: Any) -> String? {
        switch value {
        case let string as String:
            return string
        case let numbers as [NSNumber]:
            return String(decoding: numbers.map { $0.uint8Value }, as: UTF8.self)
        case let values as [Any]:
            return values.first.flatMap(text)
        default:
            return nil
        }
    }

    package var description: String {
        fields.filter { !$0.key.hasPrefix("__") }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            .joined(separator: " ")
    }
}
