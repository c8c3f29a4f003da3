import ArgumentParser
import Foundation
import TetherServer

/// `tether-server admin devices --sort/--desc/--limit/--page/--after`: one page of the ledger.
extension AdminDevices {
    func runPaged(staleSeconds: Int?) async throws {
        let filter = DeviceLedgerFilter(partition: partition, state: state)
        let sort = sort.flatMap(DeviceLedgerSort.init(rawValue:)) ?? .health
        let limit = limit ?? DeviceLedgerPageQuery.defaultLimit
        try await admin.perform({ (client: AdminClient) async throws -> AdminAPI.DevicePage in
            try await client.devicePage(filter, sort: sort, descending: desc, limit: limit, page: page, after: after, staleSeconds: staleSeconds)
        }) { page in
            Self.pageText(page)
        }
    }

    /// The page's table, the counts above it and how to ask for the next page.
    static func pageText(_ page: AdminAPI.DevicePage) -> String {
        let states = page.countsByState.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        var lines = [
            "\(page.total) entries match; by state: \(states.isEmpty ? "-" : states); stale=\(page.stale) wedged=\(page.wedged) erroring=\(page.erroring)"
        ]
        var list = page.list
        list.truncated = false  // said below, with the next page
        lines.append(table(list))
        if page.truncated {
            let first = page.offset + 1
            let range = page.nextOffset == nil ? "" : "entries \(first)-\(page.offset + page.devices.count) of \(page.total); "
            let next = page.nextOffset.map { "--page \($0 / max(1, page.limit) + 1)" }
            lines.append("(\(range)next page: \(next.map { $0 + " or " } ?? "")--after \(page.nextCursor ?? "-"))")
        }
        return lines.joined(separator: "\n")
    }
}
