import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `GET /healthz` and `GET /metrics` (docs/server.md): no token. `/healthz` answers 200 `ok`
/// when the storage answers a read, else 503: on the sync listener only `unavailable`, on
/// `metrics_listen` with a one-line reason. `/metrics` (the Prometheus text format) is served
/// on `metrics_listen`, and on the sync listener only with `public_metrics = true`.
struct ObservabilityRoutes<Context: RequestContext> {
    let service: SyncService
    /// Whether this listener serves `/metrics`.
    let metrics: Bool
    /// Whether `/healthz` says why it is unavailable (not on the devices' listener).
    let detailedHealth: Bool

    func register(on router: Router<Context>) {
        let service = self.service
        let detailedHealth = self.detailedHealth
        router.get("healthz") { _, _ in
            let health = await service.health()
            let body = health.ok ? "ok" : detailedHealth ? health.line : "unavailable"
            return Self.text(health.ok ? .ok : .serviceUnavailable, body)
        }
        guard metrics else { return }
        router.get("metrics") { _, _ in
            let text = service.metrics.exposition(await service.metricsSnapshot())
            var response = Self.text(.ok, text, newline: false)
            response.headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return response
        }
    }

    static func text(_ status: HTTPResponse.Status, _ body: String, newline: Bool = true) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: newline ? body + "\n" : body)))
    }
}
