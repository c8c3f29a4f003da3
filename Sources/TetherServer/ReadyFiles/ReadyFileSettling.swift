import TetherProtocol

/// When a written partition's ready file is worth building in the background (docs/server.md,
/// "Ready files", `settle_seconds`): once its writes have been quiet for `quiet`, or at the
/// latest `longest` after the first write the file does not hold, so that the first new device
/// after a bulk write finds the file ready instead of taking rows. Pure: the instants come from
/// the caller (``ReadyFileCache``, on its service's clock).
struct ReadyFileSettling<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// A partition written since its last background build was asked for.
    struct Pending: Sendable, Equatable {
        var firstWrite: Instant
        var lastWrite: Instant
        /// The changes committed meanwhile; nil when some came from another instance (not counted).
        var changes: Int64?
    }

    /// A partition whose writes settled, with the changes committed since it was last due.
    struct Due: Sendable, Equatable {
        var partition: PartitionName
        var changes: Int64?
    }

    /// How long a partition's writes must be quiet.
    let quiet: Duration
    /// How long a partition written without pause waits at most.
    let longest: Duration
    private(set) var pending: [PartitionName: Pending] = [:]

    init(quiet: Duration, longest: Duration) {
        self.quiet = quiet
        self.longest = max(longest, quiet)
    }

    /// A commit of `changes` changes (nil: a version another instance announced) at `now`.
    mutating func committed(_ partition: PartitionName, changes: Int64?, at now: Instant) {
        if var entry = pending[partition] {
            entry.lastWrite = now
            entry.changes = entry.changes.flatMap { counted in changes.map { counted + $0 } }
            pending[partition] = entry
        } else {
            pending[partition] = Pending(firstWrite: now, lastWrite: now, changes: changes)
        }
    }

    /// Forgets `partition` (its history was rewritten, or it got a file meanwhile for another reason).
    mutating func forget(_ partition: PartitionName) { pending[partition] = nil }

    /// When the next partition becomes due; nil when none is written.
    var nextDeadline: Instant? {
        pending.values.map { deadline(of: $0) }.min()
    }

    /// Takes the partitions due at `now`, in the order they became due.
    mutating func takeDue(at now: Instant) -> [Due] {
        let due = pending.filter { deadline(of: $0.value) <= now }
            .sorted { deadline(of: $0.value) < deadline(of: $1.value) }
        for (partition, _) in due { pending[partition] = nil }
        return due.map { Due(partition: $0.key, changes: $0.value.changes) }
    }

    private func deadline(of entry: Pending) -> Instant {
        min(entry.lastWrite.advanced(by: quiet), entry.firstWrite.advanced(by: longest))
    }
}
