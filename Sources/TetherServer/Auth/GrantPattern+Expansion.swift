import TetherProtocol

/// A grant pattern's templates filled in for one subject (docs/server.md "Grants by template").
extension GrantPattern {
    /// What a pattern yields for a subject.
    package enum Expansion: Sendable, Hashable {
        /// The pattern to match partitions against (the pattern itself when it has no template).
        case pattern(GrantPattern)
        /// The subject lacks what a template names: `{id}` of a user, `{tag:K}` of a subject
        /// without tag K. The grant gives it nothing.
        case missing(String)
        /// The expansion is not a legal partition name (or pattern): too long, say. The grant
        /// gives nothing; `admin access` reports it.
        case illegal(String)
    }

    package func expanded(for subject: AccessSubject) -> Expansion {
        guard isTemplate else { return .pattern(self) }
        var result = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}"), let template = Template(String(rest[rest.index(after: open)..<close]))
            else { return .illegal(text) }
            switch template {
            case .name: result += subject.name
            case .id:
                guard let id = subject.deviceID else { return .missing("{id}: \(subject) is not a device") }
                result += id
            case .tag(let key):
                guard let value = subject.tags[key] else { return .missing("{tag:\(key)}: \(subject) has no tag \(key)") }
                result += value
            }
            rest = rest[rest.index(after: close)...]
        }
        result += rest
        guard case .success(let pattern) = GrantPattern.parse(result), !pattern.isTemplate else { return .illegal(result) }
        if !pattern.isGlob, PartitionName(result) == nil { return .illegal(result) }
        return .pattern(pattern)
    }
}
