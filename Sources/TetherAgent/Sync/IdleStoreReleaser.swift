import ServiceLifecycle
import TetherStore

/// A store whose memory can be given back while it is idle (``PartitionStore``).
protocol IdleReleasable: AnyObject, Sendable {
    /// A count of the store's uses: unchanged means unused meanwhile.
    var uses: UInt64 { get }
    func releaseMemory()
}

extension PartitionStore: IdleReleasable {}

/// Gives back the memory of stores that have been idle — no read or write by the agent (so no
/// upload after an application's commit, no download applied, no status read) — for at least
/// one `interval`: their reader connections close and their caches are freed
/// (``PartitionStore/releaseMemory()``), then malloc returns what was freed to the system.
/// A store used again refills as it goes, and is released again after its next idle interval.
/// Commit notices do not depend on it: the commit watcher has no connection to the store
/// (docs/store.md, "Memory").
///
/// Looks at every store once per `interval` on the injected clock: a store whose use count
/// has not moved since the previous look is released (once, until it is used again).
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

    /// Runs until cancelled (or the service group's graceful shutdown).
    func run() async throws {
        var looks = Looks()
        var trimDue = false
        while !Task.isCancelled {
            do { try await clock.sleep(for: interval) } catch { return }
            // The releases of the last look have finished by now (they do not wait for accesses).
            if trimDue { trim() }
            let idle = looks.next(await stores())
            for store in idle { store.releaseMemory() }
            trimDue = !idle.isEmpty
        }
    }

    /// What the releaser saw of each store at its last look.
    struct Looks {
        private var seen: [ObjectIdentifier: (uses: UInt64, released: Bool)] = [:]

        /// Records the stores' use counts; returns those unused since the last look and not
        /// released since they were last used.
        mutating func next(_ stores: [any IdleReleasable]) -> [any IdleReleasable] {
            var now: [ObjectIdentifier: (uses: UInt64, released: Bool)] = [:]
            var idle: [any IdleReleasable] = []
            for store in stores {
                let id = ObjectIdentifier(store)
                let uses = store.uses
                if let last = seen[id], last.uses == uses {
                    if !last.released { idle.append(store) }
                    now[id] = (uses, true)
                } else {
                    now[id] = (uses, false)
                }
            }
            seen = now
            return idle
        }
    }
}
