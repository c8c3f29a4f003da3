/// Turns a swift-log metadata key into a journald field name.
///
/// journald accepts field names of upper-case ASCII letters, digits and underscores, not
/// starting with a digit, at most 64 characters; names starting with `_` are reserved for the
/// fields journald itself adds. So `tether.partition` becomes `TETHER_PARTITION`: letters are
/// upper-cased, every other character (Unicode scalar) outside `[A-Z0-9_]` becomes `_`, leading underscores and
/// digits are dropped and the result is cut to 64 characters.
package enum JournalFieldName {
    /// The longest field name journald accepts.
    package static let maximumLength = 64

    /// Fields the journal handler writes itself; metadata that would map onto one of them is
    /// written with the prefix `META_` instead so it can never replace or repeat them.
    package static let handlerFields: Set<String> = [
        "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC",
        "TETHER_LEVEL", "TETHER_LOGGER",
    ]

    /// The journald field name for a metadata key, or `nil` when nothing of the key is left
    /// (for example `"_"` or `"42"`).
    package static func sanitize(_ key: String) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(key.utf8.count, maximumLength))
        for scalar in key.unicodeScalars {
            switch scalar {
            case "A"..."Z", "0"..."9", "_": bytes.append(UInt8(scalar.value))
            case "a"..."z": bytes.append(UInt8(scalar.value) - 32)
            default: bytes.append(UInt8(ascii: "_"))
            }
        }
        let firstValid = bytes.firstIndex { $0 != UInt8(ascii: "_") && !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        guard let firstValid else { return nil }
        let name = bytes[firstValid...].prefix(maximumLength)
        return String(decoding: name, as: UTF8.self)
    }

    /// The field name for a metadata key in a record: `message_id` is journald's `MESSAGE_ID`;
    /// keys that collide with a field the handler writes get the prefix `META_`.
    static func field(forMetadataKey key: String) -> String? {
        guard let name = sanitize(key) else { return nil }
        guard handlerFields.contains(name) else { return name }
        return String(("META_" + name).prefix(maximumLength))
    }
}
