import Foundation
import HTTPTypes

/// The query of `GET /admin/devices` (docs/server.md, "Device ledger") read into a page query.
/// `partition`, `state`, `stale_seconds`, `device_id`, `user` and `q` filter; `sort`, `desc`,
/// `limit`, `offset`, `page` (1-based, of `limit` entries) and `after` (a page's
/// `next_cursor`) page. A request with none of the paging parameters is the list as it was
/// before pages (``ServerControl/legacyLimit`` entries, most recently reported first). Pure.
enum DevicePageParameters {
    static let pagingNames = ["sort", "desc", "limit", "offset", "page", "after"]

    /// The page query of `parameters`, and whether it is the list without pages.
    static func query(_ parameters: [String: String], now: Date) throws(AdminError) -> (DeviceLedgerPageQuery, legacy: Bool) {
        var filter = DeviceLedgerFilter(
            partition: parameters["partition"], state: parameters["state"], deviceID: parameters["device_id"], user: parameters["user"],
            text: parameters["q"])
        if let text = parameters["stale_seconds"] {
            guard let seconds = Int(text), seconds >= 0 else { throw AdminError(.badRequest, "stale_seconds must be a number of seconds") }
            filter.reportedBefore = now - TimeInterval(seconds)
        }
        guard pagingNames.contains(where: { parameters[$0] != nil }) else {
            return (DeviceLedgerPageQuery(filter: filter, sort: .seen, descending: true, limit: ServerControl.legacyLimit), true)
        }
        var query = DeviceLedgerPageQuery(filter: filter)
        if let text = parameters["sort"] {
            guard let sort = DeviceLedgerSort(rawValue: text) else {
                throw AdminError(
                    .badRequest, "sort \(text.debugDescription) is not an order",
                    hint: "one of \(DeviceLedgerSort.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            query.sort = sort
        }
        if let text = parameters["desc"] {
            switch text {
            case "1", "true", "yes", "": query.descending = true
            case "0", "false", "no": query.descending = false
            default: throw AdminError(.badRequest, "desc must be true or false")
            }
        }
        query.limit = try number(parameters, "limit", in: 1...DeviceLedgerPageQuery.maxLimit) ?? DeviceLedgerPageQuery.defaultLimit
        if let offset = try number(parameters, "offset", in: 0...Int(Int32.max)) { query.offset = offset }
        if let page = try number(parameters, "page", in: 1...Int(Int32.max)) {
            guard parameters["offset"] == nil else { throw AdminError(.badRequest, "give page or offset, not both") }
            let (offset, overflow) = (page - 1).multipliedReportingOverflow(by: query.limit)
            guard !overflow else { throw AdminError(.badRequest, "page is too far") }
            query.offset = offset
        }
        if let text = parameters["after"] {
            guard parameters["offset"] == nil, parameters["page"] == nil else {
                throw AdminError(.badRequest, "give after, or page or offset, not both")
            }
            do {
                query.cursor = try DeviceLedgerCursor.parse(text, sort: query.sort, descending: query.descending)
            } catch {
                throw AdminError(.badRequest, error.description)
            }
        }
        return (query, false)
    }

    private static func number(_ parameters: [String: String], _ name: String, in range: ClosedRange<Int>) throws(AdminError) -> Int? {
        guard let text = parameters[name] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw AdminError(.badRequest, "\(name) must be a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }
}
