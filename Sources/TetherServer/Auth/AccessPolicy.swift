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
/// grants and revocations made at run time.
package struct AccessPolicy: Sendable, Hashable {
    package struct Key: Sendable, Hashable, Comparable {
        package var user: String
        package var pattern: GrantPattern
        package static func < (a: Key, b: Key) -> Bool { (a.user, a.pattern.text) < (b.user, b.pattern.text) }
    }

    /// Effective grants, one access per (user, pattern).
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
        var best: PartitionAccess? = nil
        for (key, access) in grants where key.user == user && key.pattern.matches(partition.rawValue) {
            best = Self.higher(best, access)
            if best == .readwrite { break }
        }
        return best
    }

    private static func higher(_ a: PartitionAccess?, _ b: PartitionAccess) -> PartitionAccess {
        a == .readwrite || b == .readwrite ? .readwrite : .read
    }
}
