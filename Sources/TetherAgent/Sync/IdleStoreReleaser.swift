import ServiceLifecycle
import TetherStore

/// A store whose memory can be given back while it is idle (``PartitionStore``).
protocol IdleReleasable: AnyObject, Sendable {
    /// A count of the store's uses: unchanged means unused meanwhile.
    var uses: UInt64 { get }
    /// Gives back what the idle store holds; false when it could not (an access in progress).
    func releaseMemory() -> Bool
}

extension PartitionStore: IdleReleasable {}

/// Gives back the memory of stores that have been idle — no read or write by the agent (so no
/// upload after an application's commit, no download applied, no status read) — for at least
/// one `interval`: their connections close, writer and readers (``PartitionStore/releaseMemory()``),
/// then malloc returns what was freed to the system. A store used again opens its connections
/// on that use, and is released again after its next idle interval. Commit notices do not
/// depend on it: the commit watcher has no connection to the store (docs/store.md, "Memory").
///
/// Looks at every store once per `interval` on the injected clock: a store whose use count
/// has not moved since the previous look is released (once, until it is used again). A store
/// that an access still holds (a long reset's rewrite) is not released; the next look tries again.
struct IdleStoreReleaser<C: Clock>: Service where C.Duration == Duration {
    /// How long a store stays unused before it is released (at most twice this).
    static var defaultInterval: Duration { .seconds(15) }

    let clock: C
    let interval: Duration
    /// The stores open now.
    let stores: @Sendable () async -> [any IdleReleasable]
    /// Returns freed memory to the system (`malloc_trim`).
    let trim: @Sendable () -> Void

    init(
        clock: C, interval: Duration = Self.defaultInterval, trim: @escaping @Sendable () -> Void = { StoreMemory.releaseFreedMemory() },
        stores: @escaping @Sendable () async -> [any IdleReleasable]
    ) {
        self.clock = clock
        self.interval = interval
        self.trim = trim
        self.stores = stores
    }

    /// Runs until cancelled (or the service group's graceful shutdown); nothing in it can fail.
    func run() async {
        var looks = Looks()
        while !Task.isCancelled {
            do { try await clock.sleep(for: interval) } catch { return }
            // A release has freed the store's connections when it returns.
            if looks.next(await stores(), release: { $0.releaseMemory() }) > 0 { trim() }
        }
    }

    /// What the releaser saw of each store at its last look.
    struct Looks {
        private var seen: [ObjectIdentifier: (uses: UInt64, released: Bool)] = [:]

        /// Records the stores' use counts and calls `release` on those unused since the last
        /// look and not released since they were last used; returns how many it released.
        mutating func next(_ stores: [any IdleReleasable], release: (any IdleReleasable) -> Bool) -> Int {
            var now: [ObjectIdentifier: (uses: UInt64, released: Bool)] = [:]
            var released = 0
            for store in stores {
                let id = ObjectIdentifier(store)
                let uses = store.uses
                if let last = seen[id], last.uses == uses {
                    let done = last.released || release(store)
                    if done && !last.released { released += 1 }
                    now[id] = (uses, done)
                } else {
                    now[id] = (uses, false)
                }
            }
            seen = now
            return released
        }
    }
}
