import Foundation

/// The orders of a ledger page (docs/server.md, "Device ledger"). Each is total: its keys end
/// with the entry's key (user, device id, partition), so pages never repeat or skip an entry
/// that ties; `descending` reverses every key.
package enum DeviceLedgerSort: String, Sendable, CaseIterable, Codable {
    /// ``DeviceLedgerHealth`` (wedged, reset-pending, erroring, stale, the rest), then the
    /// least recently reported, then the device name.
    case health
    /// The last report, the oldest first.
    case seen
    case name
    /// The partition, then the device name.
    case partition
    /// The state, then the device name.
    case state
    /// The unsynced changes, the fewest first.
    case unsynced

    /// The sort's keys, most significant first (``DeviceLedgerSQL`` turns them into SQL).
    package var keys: [DeviceLedgerSortKey] {
        switch self {
        case .health: [.health, .reportedAt, .deviceName, .user, .deviceID, .partition]
        case .seen: [.reportedAt, .user, .deviceID, .partition]
        case .name: [.deviceName, .user, .deviceID, .partition]
        case .partition: [.partition, .deviceName, .user, .deviceID]
        case .state: [.state, .deviceName, .user, .deviceID, .partition]
        case .unsynced: [.unsynced, .user, .deviceID, .partition]
        }
    }
}

/// One key of a ledger order.
package enum DeviceLedgerSortKey: Sendable, Hashable {
    case health, reportedAt, deviceName, user, deviceID, partition, state, unsynced
}

/// A page of the ledger: `filter`, ordered by `sort`, `limit` entries from `offset`, or after
/// `cursor` (a ``DeviceLedgerPage/nextCursor``; then `offset` is not used).
package struct DeviceLedgerPageQuery: Sendable, Hashable {
    package var filter: DeviceLedgerFilter
    package var sort: DeviceLedgerSort
    package var descending: Bool
    /// 1...``maxLimit`` through the API; the storage takes what it is given.
    package var limit: Int
    package var offset: Int
    package var cursor: DeviceLedgerCursor?

    /// Whether the page's query reads the stored health class (``DeviceLedgerHealthColumn``):
    /// the `health` order, and the `unhealthy` and `wedged` filters. The storage first brings
    /// the classes to the page's cutoffs.
    package var readsStoredHealth: Bool {
        sort == .health || filter.state == DeviceLedgerHealth.unhealthyName || filter.state == DeviceLedgerHealth.wedged.name
    }

    package static let defaultLimit = 100
    package static let maxLimit = 500

    package init(
        filter: DeviceLedgerFilter = DeviceLedgerFilter(), sort: DeviceLedgerSort = .health, descending: Bool = false,
        limit: Int = DeviceLedgerPageQuery.defaultLimit, offset: Int = 0, cursor: DeviceLedgerCursor? = nil
    ) {
        self.filter = filter
        self.sort = sort
        self.descending = descending
        self.limit = limit
        self.offset = offset
        self.cursor = cursor
    }
}

/// One page, with what the list around it holds.
package struct DeviceLedgerPage: Sendable, Hashable {
    package var entries: [DeviceLedgerEntry]
    /// Entries matching the filter.
    package var total: Int
    /// Entries by state over the filter without its state (the chips above a list).
    package var countsByState: [String: Int]
    /// Over the filter without its state, as `countsByState`: entries by health class
    /// (``DeviceLedgerHealth/name``, each entry in its first class; `healthy` included).
    package var countsByHealth: [String: Int]
    /// Over the filter without its state: entries reported before the stale cutoff (whatever
    /// their class).
    package var stale: Int
    /// Over the filter without its state: entries erroring (whatever their class).
    package var erroring = 0
    /// The next page's offset and cursor; nil on the last page.
    package var nextOffset: Int?
    package var nextCursor: DeviceLedgerCursor?

    package init(
        entries: [DeviceLedgerEntry] = [], total: Int = 0, countsByState: [String: Int] = [:], countsByHealth: [String: Int] = [:], stale: Int = 0,
        nextOffset: Int? = nil, nextCursor: DeviceLedgerCursor? = nil
    ) {
        self.entries = entries
        self.total = total
        self.countsByState = countsByState
        self.countsByHealth = countsByHealth
        self.stale = stale
        self.nextOffset = nextOffset
        self.nextCursor = nextCursor
    }

    /// Wedged entries over the filter without its state.
    package var wedged: Int { countsByHealth[DeviceLedgerHealth.wedged.name] ?? 0 }
}

/// One ledger entry's identity, for a selection of devices (remote actions).
package struct DeviceLedgerKey: Sendable, Hashable, Codable {
    package var user: String
    package var deviceID: String
    package var partition: String
    package var deviceName: String

    package init(user: String, deviceID: String, partition: String, deviceName: String) {
        self.user = user
        self.deviceID = deviceID
        self.partition = partition
        self.deviceName = deviceName
    }
}

/// Where a page ended: the sort's key values of its last entry. Opaque outside (``text``).
package struct DeviceLedgerCursor: Sendable, Hashable, Codable {
    package var sort: DeviceLedgerSort
    package var descending: Bool
    package var health: Int
    package var reportedAt: Double
    package var deviceName: String
    package var user: String
    package var deviceID: String
    package var partition: String
    package var state: String
    package var unsynced: Int64

    package init(after entry: DeviceLedgerEntry, sort: DeviceLedgerSort, descending: Bool, health: DeviceLedgerHealth) {
        self.sort = sort
        self.descending = descending
        self.health = health.rawValue
        reportedAt = entry.reportedAt.timeIntervalSince1970
        deviceName = entry.deviceName
        user = entry.user
        deviceID = entry.deviceID
        partition = entry.partition
        state = entry.state
        unsynced = entry.unsyncedChanges
    }

    /// Why a cursor is refused.
    package enum Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        case malformed
        case otherOrder
        package var description: String {
            switch self {
            case .malformed: "the cursor (after) is not one a page gave (hint: start again without it)"
            case .otherOrder: "the cursor (after) belongs to another sort or direction (hint: start again without it)"
            }
        }
    }

    /// The cursor as text: base64url of its JSON.
    package var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Strings and numbers always encode.
        let data = (try? encoder.encode(self)) ?? Data()
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// ``text`` read back, for a query sorted by `sort` in that direction.
    package static func parse(_ text: String, sort: DeviceLedgerSort, descending: Bool) throws(Invalid) -> DeviceLedgerCursor {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard text.utf8.count <= 4096, let data = Data(base64Encoded: base64),
            let cursor = try? JSONDecoder().decode(DeviceLedgerCursor.self, from: data)
        else { throw .malformed }
        guard cursor.sort == sort, cursor.descending == descending else { throw .otherOrder }
        return cursor
    }
}
