import Logging

/// One journald record as the fields `sd_journal_sendv` sends: each field is `NAME=value` with a
/// binary-safe value (line breaks inside a value are kept).
package struct JournalEntry: Sendable, Equatable {
    package struct Field: Sendable, Equatable {
        package var name: String
        package var value: [UInt8]

        package init(name: String, value: [UInt8]) {
            self.name = name
            self.value = value
        }

        package init(_ name: String, _ value: String) {
            self.init(name: name, value: Array(value.utf8))
        }

        /// `NAME=value` as the bytes journald receives.
        package var bytes: [UInt8] { Array(name.utf8) + [UInt8(ascii: "=")] + value }
    }

    package var fields: [Field]

    package init(fields: [Field]) { self.fields = fields }

    /// The value of the first field with this name, as text.
    package subscript(name: String) -> String? {
        fields.first { $0.name == name }.map { String(decoding: $0.value, as: UTF8.self) }
    }

    /// The record for a swift-log event.
    ///
    /// - Parameters:
    ///   - identifier: `SYSLOG_IDENTIFIER`, the program (`tetherd`).
    ///   - label: the logger's label, written as `TETHER_LOGGER`.
    ///   - metadata: the merged metadata (handler, provider, call site) of the record.
    package init(event: LogEvent, identifier: String, label: String, metadata: Logger.Metadata) {
        let level = TetherLogLevel(loggerLevel: event.level)
        var fields: [Field] = [
            Field("MESSAGE", event.message.description),
            Field("PRIORITY", String(level.priority)),
            Field("SYSLOG_IDENTIFIER", identifier),
            Field("CODE_FILE", event.file),
            Field("CODE_LINE", String(event.line)),
            Field("CODE_FUNC", event.function),
            Field("TETHER_LEVEL", level.rawValue),
            Field("TETHER_LOGGER", label),
        ]
        var metadata = metadata
        if let error = event.error, metadata["error"] == nil {
            metadata["error"] = .string(String(describing: error))
        }
        var seen = Set<String>()
        for (key, value) in MetadataFlattening.flatten(metadata) {
            guard let name = JournalFieldName.field(forMetadataKey: key), seen.insert(name).inserted else {
                continue
            }
            fields.append(Field(name, name == "MESSAGE_ID" ? Self.normalizedMessageID(value) : value))
        }
        self.init(fields: fields)
    }

    /// journald's catalog wants a `MESSAGE_ID` of 32 lower-case hex digits; a UUID written with
    /// dashes or in upper case is brought to that form, anything else is kept as given.
    package static func normalizedMessageID(_ value: String) -> String {
        let compact = value.filter { $0 != "-" }.lowercased()
        let isHex = compact.count == 32 && compact.allSatisfy { $0.isHexDigit }
        return isHex ? compact : value
    }
}
