/// The names the agent reports as strings — a partition's state, a sync error's action, a
/// client reset's strategy, phase and outcome — as enums an application can switch over
/// (`event.resetPhase == .backingUp`). The strings on the wire stay as docs/contract.md and
/// docs/events.md list them; a name a newer agent adds decodes as `other(name)`, never as an
/// error.
public enum Tether {}

/// A name the agent reports as a string: one this release knows is a case of its own, any
/// other is `other(name)` (docs/control-protocol.md: readers ignore what they do not know).
public protocol ReportedName: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Every name this release knows, in the order docs/contract.md lists them.
    static var known: [Self] { get }
    /// A name this release does not know (a newer agent's).
    static func other(_ name: String) -> Self
    /// The name on the wire.
    var rawValue: String { get }
}

extension ReportedName {
    /// The case `name` stands for; `other(name)` when this release does not know it.
    public init(rawValue name: String) {
        self = Self.known.first { $0.rawValue == name } ?? .other(name)
    }

    /// Whether this release knows the name (false for `other`).
    public var isKnown: Bool { Self.known.contains(self) }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
