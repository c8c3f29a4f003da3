import NIOHTTP1

/// The admin client's enrollment calls (`tether-server admin enroll-key|device|audit|access`).
extension AdminClient {
    package func createEnrollmentKey(_ request: AdminAPI.EnrollmentKeyCreate) async throws -> AdminAPI.EnrollmentKeyCreated {
        try await call(.POST, "enrollment-keys", body: request)
    }

    package func enrollmentKeys() async throws -> AdminAPI.EnrollmentKeys { try await call(.GET, "enrollment-keys") }

    package func revokeEnrollmentKey(_ id: String) async throws -> AdminAPI.EnrollmentKey {
        try await call(.POST, "enrollment-keys/\(Self.escape(id))/revoke")
    }

    /// One page of identities after `after`, in name order.
    package func identities(after: String? = nil, limit: Int = 1000) async throws -> AdminAPI.Identities {
        try await call(.GET, "identities?limit=\(limit)" + (after.map { "&after=\(Self.escape($0))" } ?? ""))
    }

    /// Every identity, page after page.
    package func allIdentities() async throws -> [AdminAPI.Identity] {
        var all: [AdminAPI.Identity] = []
        var after: String? = nil
        repeat {
            let page = try await identities(after: after)
            all += page.identities
            after = page.nextAfter
        } while after != nil
        return all
    }

    package func identity(_ name: String) async throws -> AdminAPI.Identity { try await call(.GET, "identities/\(Self.escape(name))") }

    package func access(_ name: String) async throws -> AdminAPI.DeviceAccess { try await call(.GET, "identities/\(Self.escape(name))/access") }

    package func tagDevice(_ name: String, _ request: AdminAPI.TagRequest) async throws -> AdminAPI.IdentityChanged {
        try await call(.POST, "identities/\(Self.escape(name))/tags", body: request)
    }

    package func rotateDevice(_ name: String) async throws -> AdminAPI.IdentityChanged {
        try await call(.POST, "identities/\(Self.escape(name))/rotate")
    }

    package func revokeDevice(_ name: String) async throws -> AdminAPI.IdentityChanged {
        try await call(.POST, "identities/\(Self.escape(name))/revoke")
    }

    package func removeDevice(_ name: String) async throws -> AdminAPI.IdentityChanged {
        try await call(.DELETE, "identities/\(Self.escape(name))")
    }

    package func audit(after: Int64 = 0, limit: Int = 1000) async throws -> AdminAPI.Audit {
        try await call(.GET, "audit?after=\(after)&limit=\(limit)")
    }
}
