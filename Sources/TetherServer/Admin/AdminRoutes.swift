import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import TetherProtocol

extension AdminAPI.Status: ResponseEncodable {}
extension AdminAPI.Snapshot: ResponseEncodable {}
extension AdminAPI.Restored: ResponseEncodable {}
extension HealRecord: ResponseEncodable {}
extension AdminAPI.SyncState: ResponseEncodable {}
extension AdminAPI.Recovery: ResponseEncodable {}
extension AdminAPI.SchemaApplied: ResponseEncodable {}
extension AdminAPI.GrantChanged: ResponseEncodable {}
extension AdminAPI.Compacted: ResponseEncodable {}
extension AdminAPI.Devices: ResponseEncodable {}
extension AdminAPI.DevicePage: ResponseEncodable {}
extension AdminAPI.DeviceHistory: ResponseEncodable {}

/// The `/admin` HTTP API (docs/server.md): JSON in and out, `Authorization: Bearer <admin token>`.
struct AdminRoutes<Context: RequestContext> {
    let control: ServerControl
    let dataDirectory: String

    func register(on router: Router<Context>) {
        let admin = router.group("admin").add(middleware: AdminAuthMiddleware<Context>(policy: control.policy))
        admin.get("status") { _, _ in try await control.status() }
        admin.get("devices") { request, _ in
            let (query, legacy) = try DevicePageParameters.query(
                Dictionary(request.uri.queryParameters.map { (String($0.key), String($0.value)) }, uniquingKeysWith: { first, _ in first }),
                now: control.now())
            return try await control.devicePage(query, legacy: legacy)
        }
        admin.get("devices/:id/history") { _, context in
            try await control.deviceHistory(id: try context.parameters.require("id"))
        }
        admin.post("partitions/:partition/snapshot") { _, context in
            try await control.snapshot(try context.parameters.require("partition"))
        }
        admin.post("partitions/:partition/restore") { request, context in
            let body = try await request.decode(as: AdminAPI.RestoreRequest.self, context: context)
            return try await control.restore(try context.parameters.require("partition"), to: body.snapshot, mode: body.mode)
        }
        admin.post("partitions/:partition/heal-done") { _, context in
            try await control.healDone(try context.parameters.require("partition"))
        }
        admin.post("sync/terminate") { _, _ in try await control.terminateSync() }
        admin.post("sync/enable") { _, _ in try await control.enableSync() }
        admin.put("recovery") { request, context in
            try await control.setRecovery(try await request.decode(as: AdminAPI.Recovery.self, context: context).enabled)
        }
        admin.post("schema") { request, context in
            try await control.applySchema(try await request.decode(as: AdminAPI.SchemaApplyRequest.self, context: context))
        }
        admin.post("grants") { request, context in
            let body = try await request.decode(as: AdminAPI.GrantRequest.self, context: context)
            guard let text = body.access, let access = PartitionAccess(rawValue: text) else {
                throw AdminError(.badRequest, "access must be \"read\" or \"readwrite\"")
            }
            return try await control.grant(user: body.user, pattern: body.pattern, access: access)
        }
        admin.delete("grants") { request, context in
            let body = try await request.decode(as: AdminAPI.GrantRequest.self, context: context)
            return try await control.grant(user: body.user, pattern: body.pattern, access: nil)
        }
        admin.post("compact") { request, _ in
            // No body: the configured horizon. A body that does not decode is refused rather
            // than read as no body, which would compact with another horizon than asked.
            let bytes = try await request.body.collect(upTo: 1 << 16)
            var body: AdminAPI.CompactRequest? = nil
            if bytes.readableBytes > 0 {
                do {
                    body = try JSONDecoder().decode(AdminAPI.CompactRequest.self, from: Data(bytes.readableBytesView))
                } catch {
                    throw AdminError(.badRequest, "the compact request does not decode: \(error)")
                }
            }
            return try await control.compact(horizonSeconds: body?.horizonSeconds)
        }
        admin.post("backup") { _, _ in try await backup() }
        registerIdentities(on: admin)
        registerActions(on: admin)
    }

    /// Backs up into a temporary file next to the database, then streams it and removes it.
    private func backup() async throws -> Response {
        let path = (dataDirectory as NSString).appendingPathComponent("backup-\(UUID().uuidString).sqlite.tmp")
        do {
            try await control.storage.admin.backup(to: path)
        } catch {
            try? FileManager.default.removeItem(atPath: path)  // cleanup: the failure is the answer
            throw AdminError(.internalServerError, "backup failed: \(error)")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw AdminError(.internalServerError, "backup failed: cannot read \(path)")
        }
        let size: Int
        do {
            guard let bytes = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int else {
                throw AdminError(.internalServerError, "backup failed: \(path) has no size")
            }
            size = bytes
        } catch {
            try? handle.close()  // cleanup: the failure below is the answer
            try? FileManager.default.removeItem(atPath: path)  // cleanup, as above
            throw error as? AdminError ?? AdminError(.internalServerError, "backup failed: cannot read the size of \(path): \(error)")
        }
        try? FileManager.default.removeItem(atPath: path)  // the open handle keeps the data; a leftover file is only litter
        control.logger.notice("backup streamed", metadata: ["bytes": "\(size)"])
        let file = UncheckedFileHandle(handle)
        return Response(
            status: .ok, headers: [.contentType: "application/vnd.sqlite3"],
            body: ResponseBody(contentLength: size) { writer in
                defer { try? file.handle.close() }  // cleanup once streamed
                while let data = try file.handle.read(upToCount: 1 << 20), !data.isEmpty {
                    try await writer.write(ByteBuffer(bytes: data))
                }
                try await writer.finish(nil)
            })
    }
}

/// A FileHandle read by one response body writer at a time.
private struct UncheckedFileHandle: @unchecked Sendable {
    let handle: FileHandle
    init(_ handle: FileHandle) { self.handle = handle }
}

/// Refuses admin requests without the admin token (401), comparing digests in constant time.
struct AdminAuthMiddleware<Context: RequestContext>: RouterMiddleware {
    let policy: ServerPolicy

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let header = request.headers[.authorization]
        guard header?.hasPrefix("Bearer ") == true else {
            throw AdminError(.unauthorized, "the admin API needs `Authorization: Bearer <admin token>`", hint: "pass --token-file")
        }
        // The same check the connection guard makes on the request's head.
        guard policy.adminGate.accepts(authorization: header) else {
            throw AdminError(.unauthorized, "the admin token was not accepted", hint: "check --token-file against the server's admin_token_file")
        }
        return try await next(request, context)
    }
}
