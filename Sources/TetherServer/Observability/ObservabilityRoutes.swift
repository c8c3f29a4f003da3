import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `GET /healthz` and `GET /metrics` (docs/server.md): no token, on the sync listener and on
/// `metrics_listen` when it is set. `/healthz` answers 200 `ok` when the storage answers a
/// read, else 503 with a one-line reason; `/metrics` is the Prometheus text format.
struct ObservabilityRoutes<Context: RequestContext> {
    let service: SyncService

    func register(on router: Router<Context>) {
        let service = self.service
        router.get("healthz") { _, _ in
            let health = await Self.health(of: service)
            return Self.text(health.ok ? .ok : .serviceUnavailable, health.line)
        }
        router.get("metrics") { _, _ in
            do {
                let text = service.metrics.exposition(try await Self.snapshot(of: service))
                var response = Self.text(.ok, text, newline: false)
                response.headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
                return response
            } catch {
                return Self.text(.serviceUnavailable, "storage unavailable: \(Self.oneLine(error))")
            }
        }
    }

    /// Whether the storage can serve: a read of the server's flags must succeed.
    static func health(of service: SyncService) async -> (ok: Bool, line: String) {
        do {
            _ = try await service.storage.flags()
            return (true, "ok")
        } catch {
            return (false, "storage unavailable: \(oneLine(error))")
        }
    }

    static func snapshot(of service: SyncService) async throws -> ServerMetrics.Snapshot {
        let partitions = try await service.storage.partitions()
        let flags = try await service.storage.flags()
        return ServerMetrics.Snapshot(
            connectedDevices: await service.hub.connectionCount,
            boundSessions: await service.hub.sessionCounts().values.reduce(0, +),
            syncEnabled: !flags.syncTerminated,
            partitionVersions: Dictionary(partitions.map { ($0.name, $0.head.latest.version) }, uniquingKeysWith: max))
    }

    static func oneLine(_ error: any Error) -> String {
        String("\(error)".map { $0.isNewline ? " " : $0 }.prefix(300))
    }

    static func text(_ status: HTTPResponse.Status, _ body: String, newline: Bool = true) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: newline ? body + "\n" : body)))
    }
}
