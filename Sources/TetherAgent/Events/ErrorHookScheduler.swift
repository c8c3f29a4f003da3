/// When the error hook runs (docs/events.md "The error hook"), as a pure machine: times are
/// offsets on the caller's clock, actions are what the caller performs.
///
/// - At most one run per partition at a time (the connection's errors count as partition "").
/// - An error whose (partition, code) ran less than `interval` ago is held; errors held for
///   one (partition, code) are folded: the latest one runs when the interval is over, with
///   `repeats` = how many identical errors it stands for besides itself. So every error is
///   counted exactly once, in the run that carries it or in a later run's `repeats`.
/// - Held errors of different codes run oldest first.
package struct ErrorHookScheduler: Sendable {
    package enum Action: Sendable, Hashable {
        case run(SyncErrorReport, repeats: Int)
        /// Call ``timerFired(at:)`` at this time (or later).
        case wake(at: Duration)
    }

    struct Key: Hashable {
        var partition: String
        var error: String
    }

    struct Slot {
        var lastRun: Duration?
        var interval: Duration
        var held: SyncErrorReport?
        /// Errors since the last run, the held one included.
        var count = 0
        /// When the oldest of them arrived (held errors of a partition run oldest first).
        var since: Duration = .zero
    }

    private var slots: [Key: Slot] = [:]
    private var running: Set<String> = []

    package init() {}

    /// An error arrived; `interval` is its partition's `error_hook_min_interval_seconds`.
    package mutating func errorArrived(_ report: SyncErrorReport, interval: Duration, at now: Duration) -> [Action] {
        let key = Key(partition: report.partition, error: report.foldingKey)
        var slot = slots[key] ?? Slot(interval: interval)
        if slot.held == nil { slot.since = now }
        slot.held = report
        slot.count += 1
        slot.interval = interval
        slots[key] = slot
        return evaluate(report.partition, at: now)
    }

    /// The run for `partition` ended (whatever its result).
    package mutating func runFinished(partition: String, at now: Duration) -> [Action] {
        running.remove(partition)
        return evaluate(partition, at: now)
    }

    /// A wake asked for earlier is due.
    package mutating func timerFired(at now: Duration) -> [Action] {
        let partitions = Set(slots.filter { $0.value.held != nil }.map(\.key.partition))
        return partitions.sorted().flatMap { evaluate($0, at: now) }
    }

    /// Whether a run for `partition` is under way.
    package func isRunning(_ partition: String) -> Bool { running.contains(partition) }

    /// How many errors of `partition` wait for a run.
    package func heldCount(_ partition: String) -> Int {
        slots.filter { $0.key.partition == partition }.reduce(0) { $0 + ($1.value.held == nil ? 0 : $1.value.count) }
    }

    private mutating func evaluate(_ partition: String, at now: Duration) -> [Action] {
        guard !running.contains(partition) else { return [] }
        let held = slots.filter { $0.key.partition == partition && $0.value.held != nil }
        guard !held.isEmpty else { return [] }
        let due = held.filter { entry in entry.value.lastRun.map { now >= $0 + entry.value.interval } ?? true }
        guard let (key, slot) = due.min(by: { ($0.value.since, $0.key.error) < ($1.value.since, $1.key.error) }) else {
            let next = held.compactMap { entry in entry.value.lastRun.map { $0 + entry.value.interval } }.min()
            return next.map { [.wake(at: $0)] } ?? []
        }
        let report = slot.held!
        slots[key] = Slot(lastRun: now, interval: slot.interval)
        running.insert(partition)
        return [.run(report, repeats: slot.count - 1)]
    }
}
