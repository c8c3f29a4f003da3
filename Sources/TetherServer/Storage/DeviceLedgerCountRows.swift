import Foundation

/// Adds up the rows of ``DeviceLedgerSQL/counts(_:staleBefore:wedgedBefore:dialect:)`` (one per
/// state and health class, over a page's filter without its state) and makes the page of
/// them and its entries, for both storages. Pure.
package struct DeviceLedgerCountRows: Sendable, Hashable {
    package var byState: [String: Int] = [:]
    package var byHealth: [String: Int] = [:]
    package var stale = 0
    package var erroring = 0

    package init() {}

    package mutating func add(state: String, health: Int, entries: Int, stale: Int, erroring: Int) {
        byState[state, default: 0] += entries
        let name = (DeviceLedgerHealth(rawValue: health) ?? .healthy).name
        byHealth[name, default: 0] += entries
        self.stale += stale
        self.erroring += erroring
    }

    /// Entries over the filter without its state.
    package var entries: Int { byState.values.reduce(0, +) }

    /// Entries matching the whole filter, whose state is `state`.
    package func total(state: String?) -> Int {
        switch state {
        case nil: entries
        case DeviceLedgerHealth.unhealthyName?: entries - (byHealth[DeviceLedgerHealth.healthy.name] ?? 0)
        case DeviceLedgerHealth.wedged.name?: byHealth[DeviceLedgerHealth.wedged.name] ?? 0
        case DeviceLedgerHealth.erroring.name?: erroring
        case DeviceLedgerHealth.stale.name?: stale
        case let state?: byState[state] ?? 0
        }
    }

    /// The page: `fetched` is what the page query read (up to `limit + 1` entries).
    package func page(_ query: DeviceLedgerPageQuery, entries fetched: [DeviceLedgerEntry], staleBefore: Date, wedgedBefore: Date) -> DeviceLedgerPage {
        let more = fetched.count > query.limit
        let entries = Array(fetched.prefix(max(0, query.limit)))
        var page = DeviceLedgerPage(
            entries: entries, total: total(state: query.filter.state), countsByState: byState, countsByHealth: byHealth, stale: stale)
        page.erroring = erroring
        if more, let last = entries.last {
            if query.cursor == nil { page.nextOffset = query.offset + entries.count }
            page.nextCursor = DeviceLedgerCursor(
                after: last, sort: query.sort, descending: query.descending,
                health: DeviceLedgerHealth(last, staleBefore: staleBefore, wedgedBefore: wedgedBefore))
        }
        return page
    }
}
