import Foundation

/// The counts above a ledger list (``DeviceLedgerCountRows``: by state and health class, over a
/// page's filter without its state), kept per filter for ``maxAge`` so that paging through a
/// large list, or refreshing it, does not count the whole selection again for every page
/// (docs/server.md, "Device ledger": the counts of a large list may be up to ``maxAge`` old).
/// Counts over fewer than ``minimumEntries`` entries are not kept: counting them costs little,
/// so they stay exact. At most ``capacity`` filters are kept, the oldest counted going first.
/// Pure: the caller gives the time (the server's clock) and holds it under a lock.
package struct DeviceLedgerCountCache: Sendable {
    package let maxAge: TimeInterval
    package let capacity: Int
    package let minimumEntries: Int
    private var kept: [DeviceLedgerFilter: (counts: DeviceLedgerCountRows, countedAt: Date)] = [:]

    package static let defaultMaxAge: TimeInterval = 5
    package static let defaultCapacity = 64
    package static let defaultMinimumEntries = 20_000

    package init(
        maxAge: TimeInterval = Self.defaultMaxAge, capacity: Int = Self.defaultCapacity, minimumEntries: Int = Self.defaultMinimumEntries
    ) {
        self.maxAge = maxAge
        self.capacity = max(1, capacity)
        self.minimumEntries = minimumEntries
    }

    /// How many filters are kept.
    package var count: Int { kept.count }

    /// The counts of `filter` if they were counted less than ``maxAge`` before `now` (and not
    /// after it: a clock set back does not keep them longer).
    package func counts(of filter: DeviceLedgerFilter, at now: Date) -> DeviceLedgerCountRows? {
        guard let entry = kept[filter], Self.isFresh(countedAt: entry.countedAt, now: now, maxAge: maxAge) else { return nil }
        return entry.counts
    }

    /// Keeps `counts` of `filter`, counted at `now`, if they cover ``minimumEntries`` or more;
    /// drops what is no longer fresh, then the oldest counted while more than ``capacity`` are kept.
    package mutating func keep(_ counts: DeviceLedgerCountRows, of filter: DeviceLedgerFilter, at now: Date) {
        let maxAge = maxAge
        kept = kept.filter { Self.isFresh(countedAt: $0.value.countedAt, now: now, maxAge: maxAge) }
        guard counts.entries >= minimumEntries else {
            kept[filter] = nil
            return
        }
        kept[filter] = (counts, now)
        while kept.count > capacity, let oldest = kept.min(by: { $0.value.countedAt < $1.value.countedAt }) {
            kept[oldest.key] = nil
        }
    }

    private static func isFresh(countedAt: Date, now: Date, maxAge: TimeInterval) -> Bool {
        countedAt <= now && now.timeIntervalSince(countedAt) < maxAge
    }
}
