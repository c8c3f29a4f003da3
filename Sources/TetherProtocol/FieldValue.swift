/// One field's value as SQLite stores it. `boolean` columns hold `.integer(0)` or `.integer(1)`.
package enum FieldValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    package var isNull: Bool { if case .null = self { true } else { false } }

    /// A description of the value's type only: row contents are never logged.
    package var description: String {
        switch self {
        case .null: "null"
        case .integer: "integer"
        case .real: "real"
        case .text(let s): "text(\(s.utf8.count) bytes)"
        case .blob(let b): "blob(\(b.count) bytes)"
        }
    }

    /// Whether this value may be stored in a column of `type` (nullability aside).
    package func fits(_ type: ColumnType) -> Bool {
        switch (self, type) {
        case (.null, _): true
        case (.integer, .integer), (.integer, .real): true
        case (.integer(let v), .boolean): v == 0 || v == 1
        case (.real, .real): true
        case (.text, .text): true
        case (.blob, .blob): true
        default: false
        }
    }
}

/// A primary-key value: docs/contract.md "Partitions and stores" allows `integer` and `text` keys only.
package enum RowKey: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    case integer(Int64)
    case text(String)

    package init?(_ value: FieldValue) {
        switch value {
        case .integer(let v): self = .integer(v)
        case .text(let v): self = .text(v)
        default: return nil
        }
    }

    package var fieldValue: FieldValue {
        switch self {
        case .integer(let v): .integer(v)
        case .text(let v): .text(v)
        }
    }

    /// Integers sort before text, as in SQLite.
    package static func < (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): a < b
        case (.text(let a), .text(let b)): Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8))
        case (.integer, .text): true
        case (.text, .integer): false
        }
    }

    /// Keys identify rows and are not logged either: only their type is shown.
    package var description: String {
        switch self {
        case .integer: "integer key"
        case .text: "text key"
        }
    }
}
