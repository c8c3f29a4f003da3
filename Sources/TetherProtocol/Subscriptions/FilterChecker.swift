/// Checks a parsed filter against its table: every column exists, and every operand can be
/// compared with its column (docs/subscriptions.md "Types").
struct FilterChecker {
    let table: TableSchema

    func check(_ expression: FilterExpression) throws(SubscriptionFilterError) {
        switch expression {
        case .compare(let column, let comparison, let operand):
            let type = try columnType(column)
            if type == .boolean, comparison != .equal, comparison != .notEqual {
                throw mismatch("boolean column \(column) is compared with = or != only")
            }
            try check(operand, against: column, type)
        case .isIn(let column, let operands, _):
            let type = try columnType(column)
            for operand in operands { try check(operand, against: column, type) }
        case .between(let column, let low, let high, _):
            let type = try columnType(column)
            guard type != .boolean else { throw mismatch("boolean column \(column) has no range") }
            try check(low, against: column, type)
            try check(high, against: column, type)
        case .isNull(let column, _):
            try requireColumn(column)  // any type, blobs included
        case .isTrue(let column):
            guard try columnType(column) == .boolean else {
                throw mismatch("column \(column) is not boolean: compare it with a value")
            }
        case .and(let all), .or(let all):
            for inner in all { try check(inner) }
        case .not(let inner):
            try check(inner)
        }
    }

    @discardableResult
    private func requireColumn(_ column: String) throws(SubscriptionFilterError) -> ColumnSchema {
        guard let found = table.column(column) else {
            throw SubscriptionFilterError(
                .unknownColumn("no column \(column) in table \(table.name) (its columns: \(table.columns.map(\.name).joined(separator: ", ")))"), at: nil)
        }
        return found
    }

    /// The type of a column compared with values (a blob's only test is IS NULL).
    private func columnType(_ column: String) throws(SubscriptionFilterError) -> ColumnType {
        let found = try requireColumn(column)
        guard found.type != .blob else { throw mismatch("blob column \(column) can only be tested with IS NULL") }
        return found.type
    }

    private func check(_ operand: FilterOperand, against column: String, _ type: ColumnType) throws(SubscriptionFilterError) {
        switch (operand, type) {
        case (.literal(.integer), .integer), (.literal(.integer), .real), (.literal(.real), .real), (.literal(.real), .integer):
            return
        case (.literal(.integer(let value)), .boolean):
            guard value == 0 || value == 1 else { throw mismatch("boolean column \(column) holds TRUE or FALSE") }
        case (.literal(.text), .text):
            return
        case (.parameter, .text), (.parameter, .integer):
            return  // text; for an integer column it must read as one (checked when resolved)
        case (.now, .integer), (.now, .real), (.now, .text):
            return
        case (.literal(let value), _):
            throw mismatch("\(type.rawValue) column \(column) compared with \(Self.kind(of: value))")
        case (.parameter(let parameter), _):
            throw mismatch("\(type.rawValue) column \(column) compared with \(parameter), which is text")
        case (.now, _):
            throw mismatch("\(type.rawValue) column \(column) compared with now(): a time is an integer, real or text column")
        }
    }

    private func mismatch(_ message: String) -> SubscriptionFilterError {
        SubscriptionFilterError(.typeMismatch(message), at: nil)
    }

    private static func kind(of value: FieldValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer: "a number"
        case .real: "a number"
        case .text: "text"
        case .blob: "a blob"
        }
    }
}
