import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// The client side of the admin API (`tether-server admin …`): one method per command.
package struct AdminClient: Sendable {
    package enum Failure: Error, CustomStringConvertible {
        /// The server could not be reached (runtime error).
        case unreachable(String)
        /// The server answered with an error status.
        case rejected(status: Int, message: String, hint: String?, body: Data)
        case badResponse(String)
        /// The URL names the devices' listener (`listen`), which does not serve the admin API.
        case wrongListener(url: String, message: String)

        package var description: String {
            switch self {
            case .wrongListener(let url, let message):
                "\(url) is the devices' listener: \(message) (hint: pass --url with the address of admin_listen)"
            case .unreachable(let message): "cannot reach the server: \(message)"
            case .rejected(let status, let message, let hint, _):
                "server refused (HTTP \(status)): \(message)" + (hint.map { " (hint: \($0))" } ?? "")
            case .badResponse(let message): "unexpected answer from the server: \(message)"
            }
        }
    }

    package let baseURL: String
    let token: String
    let tlsConfiguration: TLSConfiguration?
    let timeout: TimeAmount
    /// How long a TCP connection to the admin listener may take (5 s: a listener that answers
    /// nothing that long is unreachable; tests on a loaded machine give more).
    let connectTimeout: TimeAmount

    /// `baseURL` is `http(s)://host:port`; a trailing `/`, `/admin` or `/sync` is ignored.
    package init(
        baseURL: String, token: String, tlsConfiguration: TLSConfiguration? = nil, timeout: TimeAmount = .seconds(60),
        connectTimeout: TimeAmount = .seconds(5)
    ) {
        var url = baseURL
        for suffix in ["/", "/admin", "/sync", "/"] where url.hasSuffix(suffix) { url.removeLast(suffix.count) }
        self.baseURL = url
        self.token = token
        self.tlsConfiguration = tlsConfiguration
        self.timeout = timeout
        self.connectTimeout = connectTimeout
    }

    package func status() async throws -> AdminAPI.Status { try await call(.GET, "status") }

    /// The device ledger; `staleSeconds` keeps the devices not reported for that long.
    package func devices(partition: String? = nil, state: String? = nil, staleSeconds: Int? = nil) async throws -> AdminAPI.Devices {
        var query: [String] = []
        if let partition { query.append("partition=\(Self.escape(partition))") }
        if let state { query.append("state=\(Self.escape(state))") }
        if let staleSeconds { query.append("stale_seconds=\(staleSeconds)") }
        return try await call(.GET, query.isEmpty ? "devices" : "devices?" + query.joined(separator: "&"))
    }

    /// One page of the device ledger (`page`: 1-based; `after`: a page's `next_cursor`).
    package func devicePage(
        _ filter: DeviceLedgerFilter, sort: DeviceLedgerSort = .health, descending: Bool = false,
        limit: Int = DeviceLedgerPageQuery.defaultLimit, page: Int? = nil, after: String? = nil, staleSeconds: Int? = nil
    ) async throws -> AdminAPI.DevicePage {
        var query = ["sort=\(sort.rawValue)", "desc=\(descending)", "limit=\(limit)"]
        for (name, value) in [
            ("partition", filter.partition), ("state", filter.state), ("device_id", filter.deviceID), ("user", filter.user), ("q", filter.text),
            ("after", after),
        ] {
            if let value { query.append("\(name)=\(Self.escape(value))") }
        }
        if let page { query.append("page=\(page)") }
        if let staleSeconds { query.append("stale_seconds=\(staleSeconds)") }
        return try await call(.GET, "devices?" + query.joined(separator: "&"))
    }

    /// The report history of the device `id`.
    package func deviceHistory(id: String) async throws -> AdminAPI.DeviceHistory {
        try await call(.GET, "devices/\(Self.escape(id))/history")
    }

    package func snapshot(_ partition: String) async throws -> AdminAPI.Snapshot {
        try await call(.POST, "partitions/\(Self.escape(partition))/snapshot")
    }

    /// `mode` nil: the server's `[history] devices_ahead`.
    package func restore(_ partition: String, snapshot: String, mode: RestoreMode? = nil) async throws -> AdminAPI.Restored {
        try await call(.POST, "partitions/\(Self.escape(partition))/restore", body: AdminAPI.RestoreRequest(snapshot: snapshot, mode: mode))
    }

    package func healDone(_ partition: String) async throws -> HealRecord {
        try await call(.POST, "partitions/\(Self.escape(partition))/heal-done")
    }

    package func terminateSync() async throws -> AdminAPI.SyncState { try await call(.POST, "sync/terminate") }
    package func enableSync() async throws -> AdminAPI.SyncState { try await call(.POST, "sync/enable") }

    package func setRecovery(_ enabled: Bool) async throws -> AdminAPI.Recovery {
        try await call(.PUT, "recovery", body: AdminAPI.Recovery(enabled: enabled))
    }

    package func applySchema(toml: String, file: String, allowBreaking: Bool) async throws -> AdminAPI.SchemaApplied {
        try await call(.POST, "schema", body: AdminAPI.SchemaApplyRequest(schemaToml: toml, file: file, allowBreaking: allowBreaking))
    }

    package func grant(user: String, pattern: String, access: String) async throws -> AdminAPI.GrantChanged {
        try await call(.POST, "grants", body: AdminAPI.GrantRequest(user: user, pattern: pattern, access: access))
    }

    package func revoke(user: String, pattern: String) async throws -> AdminAPI.GrantChanged {
        try await call(.DELETE, "grants", body: AdminAPI.GrantRequest(user: user, pattern: pattern, access: nil))
    }

    package func compact(horizonSeconds: Int?) async throws -> AdminAPI.Compacted {
        try await call(.POST, "compact", body: AdminAPI.CompactRequest(horizonSeconds: horizonSeconds))
    }

    /// Streams a consistent copy of the server's database into `path`; returns its size.
    package func backup(to path: String) async throws -> Int64 {
        try await withClient { client in
            let response = try await execute(client, .POST, "backup", body: nil)
            guard response.status == .ok else { throw try await rejection(response) }
            let temporary = path + ".partial"
            guard FileManager.default.createFile(atPath: temporary, contents: nil),
                let handle = FileHandle(forWritingAtPath: temporary)
            else { throw Failure.badResponse("cannot create \(temporary)") }
            var size: Int64 = 0
            do {
                for try await buffer in response.body {
                    try handle.write(contentsOf: Data(buffer.readableBytesView))
                    size += Int64(buffer.readableBytes)
                }
                try handle.synchronize()
                try handle.close()
                if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
                try FileManager.default.moveItem(atPath: temporary, toPath: path)
            } catch {
                try? handle.close()  // cleanup: the error is what the caller hears
                try? FileManager.default.removeItem(atPath: temporary)  // cleanup, as above
                throw error
            }
            return size
        }
    }

    func call<Response: Decodable>(_ method: HTTPMethod, _ path: String, body: (some Encodable)? = Optional<Int>.none) async throws -> Response {
        try await withClient { client in
            let response = try await execute(client, method, path, body: try body.map { try JSONEncoder().encode($0) })
            guard response.status == .ok else { throw try await rejection(response) }
            let bytes = try await response.body.collect(upTo: 64 << 20)
            do {
                return try JSONDecoder().decode(Response.self, from: Data(bytes.readableBytesView))
            } catch {
                throw Failure.badResponse("\(error)")
            }
        }
    }

    private func execute(_ client: HTTPClient, _ method: HTTPMethod, _ path: String, body: Data?) async throws -> HTTPClientResponse {
        var request = HTTPClientRequest(url: "\(baseURL)/admin/\(path)")
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: [UInt8](body)))
        }
        do {
            return try await client.execute(request, timeout: timeout)
        } catch {
            throw Failure.unreachable("\(baseURL): \(error)")
        }
    }

    private func rejection(_ response: HTTPClientResponse) async throws -> Failure {
        let bytes: ByteBuffer
        do {
            bytes = try await response.body.collect(upTo: 1 << 20)
        } catch {
            let message = "\(response.status.reasonPhrase) (the server's explanation could not be read: \(error))"
            return .rejected(status: Int(response.status.code), message: message, hint: nil, body: Data())
        }
        let data = Data(bytes.readableBytesView)
        if response.status == .notFound, response.headers.first(name: "Tether-Listener") == "devices" {
            // A body that is not the server's failure document: the message below says it.
            let message = (try? JSONDecoder().decode(AdminAPI.Failure.self, from: data))?.error
                ?? "the admin API and console are served on admin_listen, not on the devices' listener; docs/server.md"
            return .wrongListener(url: baseURL, message: message)
        }
        // A body that is not the server's failure document (a proxy's page, say): the status says it.
        if let failure = try? JSONDecoder().decode(AdminAPI.Failure.self, from: data) {
            return .rejected(status: Int(response.status.code), message: failure.error, hint: failure.hint, body: data)
        }
        return .rejected(status: Int(response.status.code), message: response.status.reasonPhrase, hint: nil, body: data)
    }

    private func withClient<T>(_ body: (HTTPClient) async throws -> T) async throws -> T {
        var configuration = HTTPClient.Configuration(tlsConfiguration: tlsConfiguration)
        configuration.timeout = .init(connect: connectTimeout)
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        do {
            let result = try await body(client)
            try await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()  // cleanup: the body's error is what the caller hears
            throw error
        }
    }

    static func escape(_ segment: String) -> String {
        segment.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._"))) ?? segment
    }
}
