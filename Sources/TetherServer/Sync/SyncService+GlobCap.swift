import TetherProtocol

extension SyncService {
    /// `[limits] glob_partitions_per_user`: a bind that would create a partition the user
    /// reaches only through glob grants is refused (206) once the user's globs already match
    /// that many partitions, so a device cannot create partitions (and metric labels) without
    /// end. Partitions named exactly in a grant are never refused.
    func globCapRefusal(_ authorized: BindRules.Authorized, snapshot: PolicySnapshot) -> SyncError? {
        let name = authorized.partition.rawValue
        guard !summary.contains(name) else { return nil }
        let patterns = snapshot.access.patterns(for: authorized.subject)
        if patterns.contains(where: { !$0.isGlob && $0.matches(name) }) { return nil }
        let globs = patterns.filter(\.isGlob)
        let reachable = summary.count { partition in globs.contains { $0.matches(partition) } }
        guard reachable >= globPartitionsPerUser else { return nil }
        return SyncError(
            .permissionDenied,
            "user \(authorized.user) may not create partition \(name): its glob grants already match \(reachable) partitions ([limits] glob_partitions_per_user = \(globPartitionsPerUser))",
            hint: "an operator may raise [limits] glob_partitions_per_user on the server, or grant the partition by its exact name")
    }
}
