import Foundation
import Hummingbird

extension AdminAPI.EnrollmentKeyCreated: ResponseEncodable {}
extension AdminAPI.EnrollmentKeys: ResponseEncodable {}
extension AdminAPI.EnrollmentKey: ResponseEncodable {}
extension AdminAPI.Identities: ResponseEncodable {}
extension AdminAPI.Identity: ResponseEncodable {}
extension AdminAPI.IdentityChanged: ResponseEncodable {}
extension AdminAPI.Audit: ResponseEncodable {}
extension AdminAPI.DeviceAccess: ResponseEncodable {}

/// The admin API's enrollment routes (docs/server.md "Admin HTTP API"): enrollment keys,
/// device identities, the audit trail. Changes are made as `admin` (the admin token's holder).
extension AdminRoutes {
    static var actor: String { "admin" }

    func registerIdentities(on admin: RouterGroup<Context>) {
        admin.post("enrollment-keys") { request, context in
            let body = try await request.decode(as: AdminAPI.EnrollmentKeyCreate.self, context: context)
            return try await control.createEnrollmentKey(body, actor: Self.actor)
        }
        admin.get("enrollment-keys") { _, _ in try await control.enrollmentKeys() }
        admin.post("enrollment-keys/:key/revoke") { _, context in
            try await control.revokeEnrollmentKey(id: try context.parameters.require("key"), actor: Self.actor)
        }
        admin.get("identities") { request, _ in
            let query = request.uri.queryParameters
            var limit = 100
            if let text = query["limit"] {
                guard let value = Int(text) else { throw AdminError.badPage("limit must be a number") }
                limit = value
            }
            return try await control.identities(after: query["after"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }, limit: limit)
        }
        admin.get("identities/:name") { _, context in try await control.identity(named: try name(context)) }
        admin.get("identities/:name/access") { _, context in try await control.access(device: try name(context)) }
        admin.post("identities/:name/tags") { request, context in
            let body = try await request.decode(as: AdminAPI.TagRequest.self, context: context)
            return try await control.tagDevice(try name(context), TagEdit(set: body.set, remove: Set(body.remove)), actor: Self.actor)
        }
        admin.post("identities/:name/rotate") { _, context in try await control.rotateDevice(try name(context), actor: Self.actor) }
        admin.post("identities/:name/revoke") { _, context in try await control.revokeDevice(try name(context), actor: Self.actor) }
        admin.delete("identities/:name") { _, context in try await control.removeDevice(try name(context), actor: Self.actor) }
        admin.get("audit") { request, _ in
            let query = request.uri.queryParameters
            guard let after = Int64(query["after"].map(String.init) ?? "0"), let limit = Int(query["limit"].map(String.init) ?? "100") else {
                throw AdminError.badPage("after and limit are numbers")
            }
            return try await control.auditRecords(after: after, limit: limit)
        }
    }

    private func name(_ context: Context) throws -> String {
        let name = try context.parameters.require("name")
        return name.removingPercentEncoding ?? name
    }
}
