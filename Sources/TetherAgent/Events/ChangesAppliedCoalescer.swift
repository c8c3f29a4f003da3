import TetherControl
import TetherProtocol
import TetherStore

/// Folds the downloads a partition applies into few `changes-applied` events: one when the
/// partition has caught up (so the last of a burst is never held back), otherwise at most one
/// per ``interval``; what a batch of acknowledgements without changes brings is nothing. A
/// pure value: the caller passes the time, so tests need no clock.
struct ChangesAppliedCoalescer: Sendable {
    static let interval: Duration = .seconds(1)

    /// Rows written per table since the last event (only tables with some).
    private var tables: [String: Int64] = [:]
    private var serverVersion: Int64 = 0
    private var lastEmitted: ContinuousClock.Instant?

    /// Nothing waits to be announced.
    var isEmpty: Bool { tables.isEmpty }

    /// Adds what one download wrote; returns the event to emit now, if it is time for one.
    mutating func add(_ report: ApplyReport, caughtUp: Bool, now: ContinuousClock.Instant, partition: String) -> AgentEvent? {
        for (table, count) in report.changesPerTable { tables[table, default: 0] += count }
        serverVersion = max(serverVersion, report.serverVersion.version)
        guard !isEmpty else { return nil }
        if caughtUp || lastEmitted.map({ $0.duration(to: now) >= Self.interval }) ?? true {
            lastEmitted = now
            return flush(partition: partition)
        }
        return nil
    }

    /// The event for what is held (nil when nothing is), and forgets it.
    mutating func flush(partition: String) -> AgentEvent? {
        guard !isEmpty else { return nil }
        let event = AgentEvent(
            .changesApplied, partition: partition, rows: tables.values.reduce(0, +), serverVersion: serverVersion, tables: tables)
        tables = [:]
        return event
    }
}
