/// How housekeeping brings a ledger over `[devices] max_entries` back to it (docs/server.md,
/// "Device ledger"), after the entries older than `history_horizon_days` went: the identities
/// (users) holding the most entries lose their least recently reported ones, and no identity
/// is cut below its fair share. Pure.
package enum DeviceLedgerTrim {
    /// The most entries each user keeps, or nil when the ledger fits as it is: the largest
    /// `cap` such that keeping at most `cap` entries per user fits in `maxEntries`. A user
    /// holding no more than `cap` loses nothing, and `cap` is never below `maxEntries` divided
    /// by the number of users holding entries (the fair share).
    package static func cap(entriesPerUser counts: [Int], maxEntries: Int) -> Int? {
        guard counts.reduce(0, +) > maxEntries else { return nil }
        func kept(_ cap: Int) -> Int { counts.reduce(0) { $0 + min($1, cap) } }
        var low = 0  // fits
        var high = counts.max() ?? 0  // does not fit (the total is over)
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if kept(middle) <= maxEntries { low = middle } else { high = middle }
        }
        return low
    }
}
