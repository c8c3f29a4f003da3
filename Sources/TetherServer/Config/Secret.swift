/// A secret read from a file (the PostgreSQL password): printing it never shows it.
public struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public let value: String

    public init(_ value: String) { self.value = value }

    public var description: String { "<secret>" }
    public var debugDescription: String { "<secret>" }
}
