import Foundation
import TetherControl

/// The agent's recent events (the last ``historyLimit``, also in the ``EventJournal`` when
/// there is one, so numbers and kept events outlive a restart) and the readers following them
/// (`tetherctl events`, client libraries). Appending never waits for a reader: each reader has
/// a bounded queue, and a reader so far behind that its queue is full misses events, counted
/// and reported to it as one `dropped` event when it catches up.
///
/// Readers run on threads of their own (they write to sockets with blocking calls), so the log
/// waits with a condition variable; every field is guarded by `condition`.
package final class EventLog: @unchecked Sendable {
    package static let historyLimit = 1000
    /// Events queued for one reader before it starts missing them.
    package static let readerQueueLimit = 512

    private let condition = NSCondition()
    private var history: [AgentEvent] = []
    private var nextSeq: UInt64 = 1
    private var readers: [Int: Reader] = [:]
    private var nextReaderID = 0
    private var closed = false
    private let journal: EventJournal?
    /// Told once each time the journal starts failing (and not again until a write succeeds).
    private let journalProblem: @Sendable (String) -> Void
    private var journalFailing = false

    struct Reader {
        var partition: String?
        var queue: [AgentEvent] = []
        var skipped = 0
    }

    /// A log in memory only (numbers start at 1), or one that goes on from `journal`'s events.
    package init(journal: EventJournal? = nil, journalProblem: @escaping @Sendable (String) -> Void = { _ in }) {
        self.journal = journal
        self.journalProblem = journalProblem
        guard let journal else { return }
        do {
            let (kept, last) = try journal.load(limit: Self.historyLimit)
            history = kept
            nextSeq = last + 1
        } catch {
            journalFailing = true
            journalProblem("the event journal \(journal.path) cannot be read (\(error)); events are numbered from 1 again and kept in memory only")
        }
    }

    /// The number of the last event (0: none yet).
    package var lastSeq: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return nextSeq - 1
    }

    /// Numbers `event`, keeps it, and queues it for every following reader it concerns.
    @discardableResult
    package func append(_ event: AgentEvent) -> AgentEvent {
        condition.lock()
        defer { condition.unlock() }
        var event = event
        event.seq = nextSeq
        nextSeq += 1
        record(event)
        history.append(event)
        if history.count > Self.historyLimit { history.removeFirst(history.count - Self.historyLimit) }
        for id in readers.keys where Self.concerns(event, readers[id]!.partition) {
            if readers[id]!.queue.count >= Self.readerQueueLimit {
                readers[id]!.skipped += 1
                continue
            }
            if readers[id]!.skipped > 0 {
                readers[id]!.queue.append(Self.dropped(readers[id]!.skipped))
                readers[id]!.skipped = 0
            }
            readers[id]!.queue.append(event)
        }
        if !readers.isEmpty { condition.broadcast() }
        return event
    }

    /// The kept events `partition` concerns (all when nil) after event `after` (all when nil),
    /// oldest first; first a `dropped` event when some after `after` are no longer kept.
    package func recent(partition: String? = nil, after: UInt64? = nil) -> [AgentEvent] {
        condition.lock()
        defer { condition.unlock() }
        return backlog(partition: partition, after: after)
    }

    /// ``recent(partition:after:)``, and a subscription to every later one (nil once the log is closed).
    package func follow(partition: String? = nil, after: UInt64? = nil) -> (backlog: [AgentEvent], subscription: EventSubscription?) {
        condition.lock()
        defer { condition.unlock() }
        let backlog = backlog(partition: partition, after: after)
        guard !closed else { return (backlog, nil) }
        let id = nextReaderID
        nextReaderID += 1
        readers[id] = Reader(partition: partition)
        return (backlog, EventSubscription(log: self, id: id))
    }

    /// Called with the lock held.
    private func backlog(partition: String?, after: UInt64?) -> [AgentEvent] {
        let kept = history.filter { Self.concerns($0, partition) }
        guard let after else { return kept }
        if after >= nextSeq {
            // A number this log never gave: the journal was lost or replaced since.
            let note = AgentEvent(
                .dropped, message: "event \(after) is newer than the agent's last (\(nextSeq - 1)): its event journal was lost or replaced; every kept event follows")
            return [note] + kept
        }
        let oldest = history.first?.seq ?? nextSeq
        let missed = oldest > after + 1 ? Int(oldest - after - 1) : 0
        let newer = kept.filter { $0.seq > after }
        guard missed > 0 else { return newer }
        return [AgentEvent(.dropped, message: "\(missed) events after \(after) are no longer kept (the agent keeps the last \(Self.historyLimit))", skipped: missed)]
            + newer
    }

    /// How many readers follow the log now.
    package var readerCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return readers.count
    }

    /// Ends every subscription (the daemon is stopping): their readers get what is queued, then the end.
    package func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// An event with a partition concerns that partition's readers; one without (a reload, a
    /// connection error) concerns every reader.
    static func concerns(_ event: AgentEvent, _ partition: String?) -> Bool {
        guard let partition else { return true }
        guard let own = event.partition, !own.isEmpty else { return true }
        return own == partition
    }

    static func dropped(_ count: Int) -> AgentEvent {
        AgentEvent(.dropped, message: "this reader fell behind: \(count) events were skipped for it", skipped: count)
    }

    /// Writes `event` to the journal (lock held). A failure is told once, and the event is kept
    /// in memory as always.
    private func record(_ event: AgentEvent) {
        guard let journal else { return }
        do {
            try journal.append(event, keeping: Self.historyLimit)
            journalFailing = false
        } catch {
            if !journalFailing {
                journalFailing = true
                journalProblem("cannot write the event journal \(journal.path) (\(error)); events are kept in memory only until it can be written again")
            }
        }
    }

    // MARK: For subscriptions

    func next(_ id: Int, until deadline: Date) -> EventSubscription.Next {
        condition.lock()
        defer { condition.unlock() }
        while true {
            guard var reader = readers[id] else { return .ended }
            if !reader.queue.isEmpty {
                let event = reader.queue.removeFirst()
                readers[id] = reader
                return .event(event)
            }
            if reader.skipped > 0 {
                let count = reader.skipped
                reader.skipped = 0
                readers[id] = reader
                return .event(Self.dropped(count))
            }
            if closed {
                readers[id] = nil
                return .ended
            }
            if !condition.wait(until: deadline) { return .timedOut }
        }
    }

    func cancel(_ id: Int) {
        condition.lock()
        readers[id] = nil
        condition.unlock()
    }
}

/// One reader's place in the ``EventLog``: the events after the ones it was given at the start.
package final class EventSubscription: Sendable {
    package enum Next: Sendable, Equatable {
        case event(AgentEvent)
        /// Nothing new before the deadline.
        case timedOut
        /// The log was closed (or the subscription cancelled): no more events.
        case ended
    }

    private let log: EventLog
    private let id: Int

    init(log: EventLog, id: Int) {
        self.log = log
        self.id = id
    }

    /// The next event, waiting until `deadline` at the most (blocks the calling thread).
    package func next(until deadline: Date) -> Next { log.next(id, until: deadline) }

    /// Stops queueing events for this reader.
    package func cancel() { log.cancel(id) }

    deinit { log.cancel(id) }
}
