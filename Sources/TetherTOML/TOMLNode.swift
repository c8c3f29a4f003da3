internal import TOMLKit

/// A parsed TOML value as a plain Sendable tree (TOMLKit's own types wrap C++ nodes).
package indirect enum TOMLNode: Sendable, Hashable {
    case string(String)
    case integer(Int)
    case float(Double)
    case bool(Bool)
    /// Dates and times, kept as their TOML text.
    case datetime(String)
    case array([TOMLNode])
    case table([String: TOMLNode])

    /// Parses TOML text; a syntax error names the line and column.
    package static func parse(_ text: String, file: String) throws(ConfigError) -> [String: TOMLNode] {
        do {
            let table = try TOMLTable(string: text)
            return convert(table)
        } catch let error as TOMLParseError {
            throw ConfigError(
                file: file, line: error.source.begin.line,
                "TOML syntax error at column \(error.source.begin.column): \(error.description)")
        } catch {
            throw ConfigError(file: file, "cannot parse as TOML: \(error)")
        }
    }

    private static func convert(_ table: TOMLTable) -> [String: TOMLNode] {
        var result: [String: TOMLNode] = [:]
        for (key, value) in zip(table.keys, table.values) { result[key] = convert(value) }
        return result
    }

    private static func convert(_ value: TOMLValue) -> TOMLNode {
        switch value.type {
        case .table: .table(value.table.map(convert) ?? [:])
        case .array: .array(value.array.map { $0.map { convert($0.tomlValue) } } ?? [])
        case .string: .string(value.string ?? "")
        case .int: .integer(value.int ?? 0)
        case .double: .float(value.double ?? 0)
        case .bool: .bool(value.bool ?? false)
        case .date, .time, .dateTime: .datetime(value.debugDescription)
        }
    }

    /// The TOML type name, for error messages.
    package var typeName: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a float"
        case .bool: "a boolean"
        case .datetime: "a date"
        case .array: "an array"
        case .table: "a table"
        }
    }
}
