import TetherProtocol

extension SyncService {
    /// The subscriptions the grants that give `subject` `partition` impose on it
    /// (`[[grant.subscription]]`, docs/subscriptions.md "Subscriptions a grant imposes"), as one
    /// set: a table is restricted only when every grant giving the partition (read or
    /// readwrite) imposes a subscription on it, and then to the rows one of those subscriptions
    /// matches, of any of these grants. nil: nothing is restricted. A grant made at run time
    /// imposes nothing (as it carries no write rules), and one that overrides a configured grant
    /// takes its subscriptions away with it.
    static func imposedSubscriptions(
        for subject: AccessSubject, partition: PartitionName, snapshot: PolicySnapshot
    ) -> Result<SubscriptionSet?, SyncError> {
        let overridden = Set(snapshot.runtimeGrants.map { AccessPolicy.Key(user: $0.user, pattern: $0.pattern) })
        var perGrant: [[String: [Subscription]]] = []
        for key in snapshot.access.grants.keys where key.subject?.covers(subject) == true {
            guard case .pattern(let pattern) = key.pattern.expanded(for: subject), pattern.matches(partition.rawValue) else { continue }
            let configured = overridden.contains(key) ? [] : snapshot.configuredGrants
                .filter { $0.user == key.user && $0.patterns.contains(key.pattern) }
            // Each configured grant behind the key gives the partition; none: it is unrestricted.
            guard !configured.isEmpty else { return .success(nil) }
            for grant in configured {
                perGrant.append(Dictionary(grouping: grant.subscriptions, by: \.table))
            }
        }
        guard let first = perGrant.first else { return .success(nil) }
        let restricted = perGrant.dropFirst().reduce(Set(first.keys)) { $0.intersection($1.keys) }
        guard !restricted.isEmpty else { return .success(nil) }
        let subscriptions = perGrant.flatMap { grant in restricted.flatMap { grant[$0] ?? [] } }
        do {
            return .success(try SubscriptionSet(subscriptions))
        } catch {
            return .failure(Self.badImposition(error))
        }
    }

    /// 227 for what a grant imposes and the server cannot serve to this device: the operator's
    /// configuration (or the device's tags), not the device's.
    static func badImposition(_ error: SubscriptionSetError) -> SyncError {
        SyncError(
            .badQuery, "a subscription the server's grant imposes cannot be served to this device: \(error)",
            hint: "fix the grant's [[grant.subscription]] in tether-server.toml (or the device's tags on the server) and reload the server; nothing was applied")
    }

    /// 227 for an agent without subscriptions (protocol 8 or older) whose grant imposes them: it
    /// can only hold the whole partition, which the grant does not allow.
    static func imposedOnOldAgent(_ imposed: SubscriptionSet) -> SyncError {
        let tables = imposed.tables.sorted().joined(separator: ", ")
        return SyncError(
            .badQuery,
            "the device's grant restricts which rows of \(tables) it may hold, and its agent does not support subscriptions (sync protocol \(TetherVersion.subscriptions) or later): it would hold the whole partition",
            hint: "upgrade tetherd on the device to a release with subscriptions (protocol \(TetherVersion.subscriptions)); the partition syncs again without a reset")
    }
}
