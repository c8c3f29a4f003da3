/// The tokens of a subscription filter's text (``SubscriptionFilter``), each with its byte offset.
struct FilterToken: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        /// A column name, bare (`price_zone`) or quoted (`"order"`); `quoted` names are never keywords.
        case identifier(String, quoted: Bool)
        case integer(Int64)
        case real(Double)
        case string(String)
        /// `7d`, `36h`, `15m`, `90s`, `2w`: seconds.
        case duration(Int64)
        case parameter(FilterParameter)
        case symbol(String)
        case end
    }

    let kind: Kind
    let offset: Int

    /// A bare identifier spelled `word` in any case (`AND`, `and`).
    func isKeyword(_ word: String) -> Bool {
        if case .identifier(let name, quoted: false) = kind { name.uppercased() == word } else { false }
    }
}

enum FilterLexer {
    static func tokens(of text: String) throws(SubscriptionFilterError) -> [FilterToken] {
        let bytes = Array(text.utf8)
        var tokens: [FilterToken] = []
        var index = 0
        func fail(_ message: String, _ at: Int) -> SubscriptionFilterError { SubscriptionFilterError(.syntax(message), at: at) }
        while index < bytes.count {
            let start = index
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                index += 1
            case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: ","), UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"):
                tokens.append(FilterToken(kind: .symbol(String(UnicodeScalar(byte))), offset: start))
                index += 1
            case UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "!"):
                let next = index + 1 < bytes.count ? bytes[index + 1] : 0
                var symbol = String(UnicodeScalar(byte))
                if next == UInt8(ascii: "=") || (byte == UInt8(ascii: "<") && next == UInt8(ascii: ">")) {
                    symbol.append(Character(UnicodeScalar(next)))
                }
                guard symbol != "!" else { throw fail("'!' must be followed by '='", start) }
                tokens.append(FilterToken(kind: .symbol(symbol == "<>" ? "!=" : symbol), offset: start))
                index += symbol.utf8.count
            case UInt8(ascii: "'"):
                // SQL's string literal: '' is a quote inside it.
                var value: [UInt8] = []
                index += 1
                while true {
                    guard index < bytes.count else { throw fail("a string that does not end", start) }
                    if bytes[index] == UInt8(ascii: "'") {
                        if index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "'") {
                            value.append(UInt8(ascii: "'"))
                            index += 2
                            continue
                        }
                        index += 1
                        break
                    }
                    value.append(bytes[index])
                    index += 1
                }
                tokens.append(FilterToken(kind: .string(String(decoding: value, as: UTF8.self)), offset: start))
            case UInt8(ascii: "\""):
                guard let close = bytes[(index + 1)...].firstIndex(of: UInt8(ascii: "\"")), close > index + 1 else {
                    throw fail("a quoted column name that does not end", start)
                }
                tokens.append(FilterToken(kind: .identifier(String(decoding: bytes[(index + 1)..<close], as: UTF8.self), quoted: true), offset: start))
                index = close + 1
            case UInt8(ascii: "{"):
                guard let close = bytes[(index + 1)...].firstIndex(of: UInt8(ascii: "}")) else {
                    throw fail("a parameter that does not end with '}'", start)
                }
                let name = String(decoding: bytes[(index + 1)..<close], as: UTF8.self)
                tokens.append(FilterToken(kind: .parameter(try parameter(name, at: start)), offset: start))
                index = close + 1
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."):
                var end = index
                while end < bytes.count, isDigit(bytes[end]) || bytes[end] == UInt8(ascii: ".") { end += 1 }
                let number = String(decoding: bytes[index..<end], as: UTF8.self)
                if end < bytes.count, let unit = durationUnit(bytes[end]), end + 1 >= bytes.count || !isWordByte(bytes[end + 1]) {
                    guard let count = Int64(number), count <= 36_500 * 86_400 / unit else { throw fail("a duration must be a whole number: \(number)", start) }
                    tokens.append(FilterToken(kind: .duration(count * unit), offset: start))
                    index = end + 1
                    continue
                }
                guard end >= bytes.count || !isWordByte(bytes[end]) else { throw fail("a number followed by letters (durations are 90s, 15m, 36h, 7d, 2w)", start) }
                if let integer = Int64(number) {
                    tokens.append(FilterToken(kind: .integer(integer), offset: start))
                } else if let real = Double(number), real.isFinite {
                    tokens.append(FilterToken(kind: .real(real), offset: start))
                } else {
                    throw fail("not a number: \(number)", start)
                }
                index = end
            default:
                guard isWordByte(byte), !isDigit(byte) else {
                    throw fail("unexpected character '\(String(decoding: [byte], as: UTF8.self))'", start)
                }
                var end = index
                while end < bytes.count, isWordByte(bytes[end]) { end += 1 }
                tokens.append(FilterToken(kind: .identifier(String(decoding: bytes[index..<end], as: UTF8.self), quoted: false), offset: start))
                index = end
            }
        }
        tokens.append(FilterToken(kind: .end, offset: bytes.count))
        return tokens
    }

    private static func parameter(_ name: String, at offset: Int) throws(SubscriptionFilterError) -> FilterParameter {
        switch name {
        case "name": return .name
        case "id": return .id
        default:
            guard name.hasPrefix("tag:"), name.count > 4 else {
                throw SubscriptionFilterError(.syntax("unknown parameter {\(name)}: {name}, {id} or {tag:KEY}"), at: offset)
            }
            return .tag(String(name.dropFirst(4)))
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || byte == UInt8(ascii: "_")
    }

    /// Seconds in a duration's unit.
    private static func durationUnit(_ byte: UInt8) -> Int64? {
        switch byte {
        case UInt8(ascii: "s"): 1
        case UInt8(ascii: "m"): 60
        case UInt8(ascii: "h"): 3_600
        case UInt8(ascii: "d"): 86_400
        case UInt8(ascii: "w"): 604_800
        default: nil
        }
    }
}
