/// Markup for the web console. A value interpolated into it is escaped (``ConsoleHTML/escape(_:)``:
/// for an element or an attribute value) unless it is itself `HTML` or is marked
/// `\(raw: …)`, so that escaping is not left to each page: a device's name, a diagnostics
/// report or an operator's note can only ever be text.
struct HTML: Sendable, Equatable, ExpressibleByStringInterpolation {
    /// The markup.
    private(set) var text: String

    /// Markup taken as it is: for what is already markup (the stylesheet, a built fragment).
    init(raw text: String) { self.text = text }

    init(stringLiteral value: String) { text = value }

    init(stringInterpolation: Interpolation) { text = stringInterpolation.text }

    struct Interpolation: StringInterpolationProtocol {
        var text = ""

        init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity + 16 * interpolationCount) }

        mutating func appendLiteral(_ literal: String) { text += literal }

        /// Markup: as it is.
        mutating func appendInterpolation(_ html: HTML) { text += html.text }

        /// Pieces of markup, one after the other.
        mutating func appendInterpolation(_ parts: [HTML]) { for part in parts { text += part.text } }

        /// Text: escaped.
        mutating func appendInterpolation(_ value: String) { text += ConsoleHTML.escape(value) }

        /// Anything else (numbers, names): its description, escaped.
        mutating func appendInterpolation(_ value: some CustomStringConvertible) { text += ConsoleHTML.escape(value.description) }

        /// Text the caller vouches for as markup.
        mutating func appendInterpolation(raw: String) { text += raw }
    }

    static let empty: HTML = ""

    static func + (lhs: HTML, rhs: HTML) -> HTML { HTML(raw: lhs.text + rhs.text) }

    static func += (lhs: inout HTML, rhs: HTML) { lhs.text += rhs.text }
}

extension Sequence<HTML> {
    /// The pieces one after the other, `separator` between them.
    func joined(separator: HTML = "") -> HTML {
        HTML(raw: map(\.text).joined(separator: separator.text))
    }
}
