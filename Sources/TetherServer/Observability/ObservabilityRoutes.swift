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
            let health = await service.health()
            return Self.text(health.ok ? .ok : .serviceUnavailable, health.line)
        }
        router.get("metrics") { _, _ in
            do {
                let text = service.metrics.exposition(try await service.metricsSnapshot())
                var response = Self.text(.ok, text, newline: false)
                response.headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
                return response
            } catch {
                return Self.text(.serviceUnavailable, "storage unavailable: \(SyncService.oneLine(error))")
            }
        }
    }

    static func text(_ status: HTTPResponse.Status, _ body: String, newline: Bool = true) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: newline ? body + "\n" : body)))
    }
}
