import Foundation

/// What a device list of the console was asked for (its GET form and links, decoded with
/// `URLEncodedFormDecoder`): the filter (partition name or glob, state or health class, not
/// seen for, text in the name or id), the order (``DeviceLedgerSort``, unhealthy first by
/// default; `desc=1` reverses it), the page (`offset`), and `refresh` (seconds: the page
/// reloads itself that often). Empty fields are no filter; a sort, offset or refresh that
/// does not read is the default.
struct ConsoleDeviceQuery: Sendable, Decodable, Equatable {
    var partition: String?
    var state: String?
    var stale: String?
    var text: String?
    var sort: DeviceLedgerSort = .health
    var descending = false
    var offset = 0
    var refresh: Int?

    /// Rows a page shows.
    static let pageSize = 100
    /// The refresh periods a page offers, and the bounds of one asked for.
    static let refreshChoices = [10, 30, 60]
    static let refreshBounds = 5...3600

    init(
        partition: String? = nil, state: String? = nil, stale: String? = nil, text: String? = nil, sort: DeviceLedgerSort = .health,
        descending: Bool = false, offset: Int = 0, refresh: Int? = nil
    ) {
        self.partition = partition
        self.state = state
        self.stale = stale
        self.text = text
        self.sort = sort
        self.descending = descending
        self.offset = offset
        self.refresh = refresh
    }

    private enum CodingKeys: String, CodingKey { case partition, state, stale, text, sort, desc, offset, refresh }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func field(_ key: CodingKeys) throws -> String? {
            try c.decodeIfPresent(String.self, forKey: key).map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        self.init(
            partition: try field(.partition), state: try field(.state), stale: try field(.stale), text: try field(.text),
            sort: try field(.sort).flatMap(DeviceLedgerSort.init(rawValue:)) ?? .health, descending: try field(.desc) == "1",
            offset: max(0, try field(.offset).flatMap { Int($0) } ?? 0),
            refresh: try field(.refresh).flatMap { Int($0) }.map { min(max($0, Self.refreshBounds.lowerBound), Self.refreshBounds.upperBound) })
    }

    /// Why the query cannot be shown (a "not seen for" that is no duration), or nil.
    var problem: String? {
        if let stale, DurationText.seconds(stale) == nil { return "“Not seen for” takes a duration such as 90s, 30m, 24h or 7d." }
        if let state, !DeviceLedgerFilter.stateNames.contains(state) {
            return "“State” is one of \(DeviceLedgerFilter.stateNames.joined(separator: ", "))."
        }
        return nil
    }

    /// The ledger filter at `now`.
    func filter(now: Date) -> DeviceLedgerFilter {
        DeviceLedgerFilter(
            partition: partition, state: state, reportedBefore: stale.flatMap(DurationText.seconds).map { now - TimeInterval($0) }, text: text)
    }

    /// The page the storage is asked for.
    func page(now: Date) -> DeviceLedgerPageQuery {
        DeviceLedgerPageQuery(filter: filter(now: now), sort: sort, descending: descending, limit: Self.pageSize, offset: offset)
    }

    /// The query as a link's query string (`?…`, or "" when it asks for nothing): the
    /// defaults left out, every value percent-encoded.
    var queryString: String {
        var items: [(String, String)] = []
        if let partition { items.append(("partition", partition)) }
        if let state { items.append(("state", state)) }
        if let stale { items.append(("stale", stale)) }
        if let text { items.append(("text", text)) }
        if sort != .health { items.append(("sort", sort.rawValue)) }
        if descending { items.append(("desc", "1")) }
        if offset > 0 { items.append(("offset", "\(offset)")) }
        if let refresh { items.append(("refresh", "\(refresh)")) }
        return items.isEmpty ? "" : "?" + items.map { "\($0.0)=\(Self.encode($0.1))" }.joined(separator: "&")
    }

    /// This query changed by `change` (a page's link: another sort, page, state or refresh).
    func with(_ change: (inout ConsoleDeviceQuery) -> Void) -> ConsoleDeviceQuery {
        var copy = self
        change(&copy)
        return copy
    }

    /// A value for a query string: everything but unreserved characters percent-encoded.
    static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~*"))) ?? value
    }
}
