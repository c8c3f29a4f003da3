/// A secret read from a file (the PostgreSQL password): printing it never shows it.
package struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    package let value: String

    package init(_ value: String) { self.value = value }

    package var description: String { "<secret>" }
    package var debugDescription: String { "<secret>" }
}
