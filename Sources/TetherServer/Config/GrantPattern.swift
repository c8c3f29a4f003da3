import TetherProtocol

/// A partition name or glob of a grant (`store-17`, `catalog-*`, `pos-??`): `*` matches any
/// run of characters, `?` exactly one. Everything else must be a partition-name character, or
/// a template (issue 48) expanded per subject at bind: `{name}` (the user's or device's name),
/// `{id}` (a device's id), `{tag:K}` (the device's tag K) — ``expanded(for:)``.
package struct GrantPattern: Sendable, Hashable, CustomStringConvertible, Codable {
    package let text: String

    package struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        package var description: String
    }

    package static func parse(_ text: String) -> Result<GrantPattern, Invalid> {
        let bytes = Array(text.utf8)
        guard (1...256).contains(bytes.count) else {
            return .failure(Invalid(description: "pattern must be 1 to 256 characters"))
        }
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x7B {
                guard let close = bytes[i...].firstIndex(of: 0x7D) else {
                    return .failure(Invalid(description: "\(text.debugDescription) opens a template with { and never closes it"))
                }
                let name = String(decoding: bytes[(i + 1)..<close], as: UTF8.self)
                guard Template(name) != nil else {
                    return .failure(Invalid(description:
                        "{\(name)} in \(text.debugDescription) is not a template; templates are {name}, {id} and {tag:KEY}"))
                }
                i = close + 1
                continue
            }
            let ok = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == 0x2E || b == 0x5F || b == 0x2D || b == 0x2A || b == 0x3F
            guard ok else {
                return .failure(Invalid(description:
                    "\(text.debugDescription) may only contain partition-name characters (A-Z a-z 0-9 . _ -), the wildcards * and ?, and the templates {name}, {id} and {tag:KEY}"))
            }
            i += 1
        }
        return .success(GrantPattern(text: text))
    }

    /// A template of a pattern, between braces.
    package enum Template: Sendable, Hashable {
        case name
        case id
        case tag(String)

        init?(_ text: String) {
            switch text {
            case "name": self = .name
            case "id": self = .id
            default:
                guard text.hasPrefix("tag:") else { return nil }
                let key = String(text.dropFirst(4))
                guard DeviceIdentityRules.isValidTagKey(key) else { return nil }
                self = .tag(key)
            }
        }
    }

    /// Whether the pattern has a template (it matches nothing until expanded).
    package var isTemplate: Bool { text.utf8.contains(0x7B) }

    private init(text: String) { self.text = text }

    package init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(String.self)
        switch Self.parse(raw) {
        case .success(let pattern): self = pattern
        case .failure(let error): throw error
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    package var isGlob: Bool { text.utf8.contains(0x2A) || text.utf8.contains(0x3F) }

    package var description: String { text }

    /// Iterative glob match with backtracking to the last `*`: linear in practice, no recursion.
    package func matches(_ name: String) -> Bool {
        let p = Array(text.utf8)
        let s = Array(name.utf8)
        var pi = 0, si = 0
        var star = -1, mark = 0
        while si < s.count {
            if pi < p.count && (p[pi] == 0x3F || p[pi] == s[si]) {
                pi += 1
                si += 1
            } else if pi < p.count && p[pi] == 0x2A {
                star = pi
                mark = si
                pi += 1
            } else if star >= 0 {
                pi = star + 1
                mark += 1
                si = mark
            } else {
                return false
            }
        }
        while pi < p.count && p[pi] == 0x2A { pi += 1 }
        return pi == p.count
    }
}
