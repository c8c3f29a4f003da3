import NIOHTTP1

/// The admin client's remote-action calls (`tether-server admin device action|actions`,
/// `admin action request|show`).
extension AdminClient {
    package func requestActions(_ order: AdminAPI.ActionOrder) async throws -> AdminAPI.ActionRequest {
        try await call(.POST, "actions", body: order)
    }

    package func countSelection(_ selection: AdminAPI.Selection) async throws -> AdminAPI.SelectionCount {
        let query = [("partition", selection.partition), ("state", selection.state), ("stale", selection.stale), ("text", selection.text)]
            .compactMap { key, value in value.map { "\(key)=\(Self.escape($0))" } }
        return try await call(.GET, query.isEmpty ? "actions/count" : "actions/count?" + query.joined(separator: "&"))
    }

    package func deviceActions(_ device: String) async throws -> AdminAPI.DeviceActions {
        try await call(.GET, "actions?device=\(Self.escape(device))")
    }

    package func deviceAction(id: Int64) async throws -> AdminAPI.DeviceAction {
        try await call(.GET, "actions/\(id)")
    }
}
