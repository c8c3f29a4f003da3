import Foundation
import HTTPTypes

extension AdminAPI {
    /// `GET /admin/identities/{name}/access`: what a device may sync and why — each grant
    /// whose subject matches it, its pattern as written and as expanded for the device
    /// (templates `{name}`, `{id}`, `{tag:K}`), and why a grant gives nothing.
    package struct DeviceAccess: Codable, Sendable, Hashable {
        package var device: String
        package var tags: [String: String]
        package var grants: [Grant]

        package struct Grant: Codable, Sendable, Hashable {
            /// The grant's subject: the device's name, `tag:K=V` or `device:*`.
            package var subject: String
            package var pattern: String
            /// The pattern expanded for this device; nil when it expands to nothing.
            package var partitions: String?
            /// `read` or `readwrite`.
            package var access: String
            /// Why the grant gives the device nothing (a tag it lacks, an illegal partition name).
            package var problem: String?
        }
    }
}

extension ServerControl {
    /// What `device` may sync and why (`admin access DEVICE`). The explanation is the access
    /// policy's, which grants by tag and template (issue 48) bring; this build does not have it.
    package func access(device name: String) async throws -> AdminAPI.DeviceAccess {
        _ = try await identity(named: name)
        throw AdminError(
            .notImplemented, "not yet: this build cannot explain a device's access",
            hint: "grants by tag and template come with the access policy of issue 48")
    }
}
