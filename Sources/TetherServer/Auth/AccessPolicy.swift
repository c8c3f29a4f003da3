import TetherProtocol

/// A grant changed at run time (`tether-server admin grant|revoke`), stored in the server's
/// database. `access == nil` records a revocation, which also hides a grant of the config file.
package struct RuntimeGrant: Sendable, Hashable, Codable {
    package var user: String
    package var pattern: GrantPattern
    package var access: PartitionAccess?

    package init(user: String, pattern: GrantPattern, access: PartitionAccess?) {
        self.user = user
        self.pattern = pattern
        self.access = access
    }
}

/// Who may use which partition: the `[[grant]]`s of the config file, overlaid by the
/// grants and revocations made at run time. A grant's subject (``Key/user``) is a user's or
/// device's name, `tag:K=V` or `device:*` (``GrantSubject``); its pattern may hold templates
/// filled in per subject (``GrantPattern/expanded(for:)``), so one grant serves a fleet without
/// a row per device.
package struct AccessPolicy: Sendable, Hashable {
    package struct Key: Sendable, Hashable, Comparable {
        /// The grant's subject as text: a name, `tag:K=V` or `device:*`.
        package let user: String
        package let pattern: GrantPattern
        /// `user` parsed; nil for a text no grant can have (the admin API refuses it).
        package let subject: GrantSubject?
        package static func < (a: Key, b: Key) -> Bool { (a.user, a.pattern.text) < (b.user, b.pattern.text) }

        package init(user: String, pattern: GrantPattern) {
            self.user = user
            self.pattern = pattern
            // A text no subject has matches no one: it gives nothing, as before.
            self.subject = try? GrantSubject.parse(user)
        }

        package static func == (a: Key, b: Key) -> Bool { a.user == b.user && a.pattern == b.pattern }

        package func hash(into hasher: inout Hasher) {
            hasher.combine(user)
            hasher.combine(pattern)
        }
    }

    /// Effective grants, one access per (subject, pattern).
    package private(set) var grants: [Key: PartitionAccess]

    package init(configured: [ServerConfiguration.Grant], runtime: [RuntimeGrant]) {
        var grants: [Key: PartitionAccess] = [:]
        for grant in configured {
            for pattern in grant.patterns {
                let key = Key(user: grant.user, pattern: pattern)
                grants[key] = Self.higher(grants[key], grant.access)
            }
        }
        for change in runtime {
            grants[Key(user: change.user, pattern: change.pattern)] = change.access
        }
        self.grants = grants
    }

    /// The best access any of the user's grants gives to `partition`, nil when none does.
    package func access(user: String, partition: PartitionName) -> PartitionAccess? {
        access(.user(user), partition: partition)
    }

    /// The best access any grant for `subject` gives to `partition` (templates filled in for
    /// it), nil when none does.
    package func access(_ subject: AccessSubject, partition: PartitionName) -> PartitionAccess? {
        var best: PartitionAccess? = nil
        for (key, access) in grants where key.subject?.covers(subject) == true {
            guard case .pattern(let pattern) = key.pattern.expanded(for: subject), pattern.matches(partition.rawValue) else { continue }
            best = Self.higher(best, access)
            if best == .readwrite { break }
        }
        return best
    }

    /// The patterns `subject`'s grants yield (templates filled in; those yielding nothing left
    /// out), for the glob cap.
    package func patterns(for subject: AccessSubject) -> [GrantPattern] {
        grants.keys.sorted().compactMap { key in
            guard key.subject?.covers(subject) == true, case .pattern(let pattern) = key.pattern.expanded(for: subject) else { return nil }
            return pattern
        }
    }

    /// One grant as it applies to a subject (`admin access DEVICE`).
    package struct Explanation: Sendable, Hashable {
        /// The grant's subject as written (`alice`, `tag:store=17`, `device:*`).
        package var subject: String
        /// The grant's pattern as written (`store-{tag:store}`).
        package var pattern: String
        package var access: PartitionAccess
        /// What the pattern yields for the subject.
        package var outcome: GrantPattern.Expansion

        package init(subject: String, pattern: String, access: PartitionAccess, outcome: GrantPattern.Expansion) {
            self.subject = subject
            self.pattern = pattern
            self.access = access
            self.outcome = outcome
        }

        /// The partition pattern it yields, nil when it yields nothing.
        package var yields: String? {
            if case .pattern(let pattern) = outcome { return pattern.text }
            return nil
        }

        /// Why it yields nothing, nil when it yields a pattern.
        package var whyNot: String? {
            switch outcome {
            case .pattern: nil
            case .missing(let reason): reason
            case .illegal(let text): "\(text.debugDescription) is not a legal partition name"
            }
        }
    }

    /// Every grant for `subject` (by its name, a tag it has, or `device:*`), in order of subject
    /// and pattern, with the pattern each yields for it or why it yields nothing.
    package func explain(_ subject: AccessSubject) -> [Explanation] {
        grants.sorted { $0.key < $1.key }.compactMap { key, access in
            guard key.subject?.covers(subject) == true else { return nil }
            return Explanation(subject: key.user, pattern: key.pattern.text, access: access, outcome: key.pattern.expanded(for: subject))
        }
    }

    private static func higher(_ a: PartitionAccess?, _ b: PartitionAccess) -> PartitionAccess {
        a == .readwrite || b == .readwrite ? .readwrite : .read
    }
}
