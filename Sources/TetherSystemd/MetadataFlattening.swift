import Logging

/// Flattens swift-log metadata into `key = value` pairs, sorted by key, the way both Tether
/// handlers write it.
///
/// Nested dictionaries become dotted keys (`["tether.hook": ["name": "before-reset"]]` gives
/// `tether.hook.name = before-reset`); arrays become one value written like `[a, b]`; other
/// values are their description.
package enum MetadataFlattening {
    package static func flatten(_ metadata: Logger.Metadata) -> [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = []
        append(metadata, prefix: "", to: &pairs)
        return pairs.sorted { $0.key < $1.key }
    }

    /// One value as text; dictionaries and arrays inside arrays are written inline.
    package static func text(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let string): string
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): "[" + values.map(text).joined(separator: ", ") + "]"
        case .dictionary(let dictionary):
            "[" + dictionary.sorted { $0.key < $1.key }.map { "\($0.key): \(text($0.value))" }
                .joined(separator: ", ") + "]"
        }
    }

    private static func append(
        _ metadata: Logger.Metadata, prefix: String, to pairs: inout [(key: String, value: String)]
    ) {
        for (key, value) in metadata {
            let fullKey = prefix.isEmpty ? key : prefix + "." + key
            if case .dictionary(let nested) = value, !nested.isEmpty {
                append(nested, prefix: fullKey, to: &pairs)
            } else {
                pairs.append((fullKey, text(value)))
            }
        }
    }
}
