/// Why a filter was refused: what, and where in its text (a byte offset, 0-based) when it is
/// about the text. Never includes a row's values; a literal of the filter's own may appear.
package struct SubscriptionFilterError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Reason: Sendable, Hashable {
        case syntax(String)
        /// Says which column and which the table has.
        case unknownColumn(String)
        /// The column cannot be compared with that operand (types, or a blob).
        case typeMismatch(String)
        case tooLarge(String)
        /// The device lacks a parameter the filter names, or its value does not fit the column.
        case parameter(String)
    }

    package let reason: Reason
    /// Byte offset in the filter's text; nil when the error is not about a place in it.
    package let offset: Int?

    package init(_ reason: Reason, at offset: Int?) {
        self.reason = reason
        self.offset = offset
    }

    package var description: String {
        let place = offset.map { " (at byte \($0 + 1))" } ?? ""
        return switch reason {
        case .syntax(let message): "\(message)\(place)"
        case .unknownColumn(let message): message
        case .typeMismatch(let message): "\(message)\(place)"
        case .tooLarge(let message): "the filter is too large: \(message)\(place)"
        case .parameter(let message): message
        }
    }
}
