import Hummingbird

/// The form of a console action (`POST /console/actions/NAME`), decoded with Hummingbird's
/// `URLEncodedFormDecoder`: the fields any action's form may carry, each a string when sent
/// (empty when sent empty), absent otherwise; fields no action knows are dropped.
/// ``ConsoleActions`` reads the ones its action needs and, asking for confirmation, carries
/// the sent ones on as hidden fields.
struct ConsoleActionForm: Decodable, Sendable, Equatable {
    enum Field: String, CodingKey, CaseIterable {
        case csrf, confirmed
        case partition, snapshot, mode
        case user, pattern, access
        case tags, uses, reusable, expires, note, key
        case device, deviceID = "device-id"
        case kind, state, stale, text
        case selectPartition = "select-partition"
    }

    private(set) var fields: [Field: String] = [:]

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Field.self)
        for field in Field.allCases {
            fields[field] = try container.decodeIfPresent(String.self, forKey: field)
        }
    }

    /// A form from named fields (names no action knows are dropped).
    init(_ values: [String: String] = [:]) {
        for (name, value) in values {
            if let field = Field(rawValue: name) { fields[field] = value }
        }
    }

    subscript(_ name: String) -> String? { Field(rawValue: name).flatMap { fields[$0] } }

    subscript(_ field: Field) -> String? {
        get { fields[field] }
        set { fields[field] = newValue }
    }

    /// The fields sent, by name, but the CSRF token and the confirmation: what a confirmation
    /// page carries on.
    var carried: [(name: String, value: String)] {
        Field.allCases.filter { $0 != .csrf && $0 != .confirmed }.compactMap { f in fields[f].map { (f.rawValue, $0) } }
    }
}
