import Foundation
import HTTPTypes
import TetherProtocol

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
    /// What `device` may sync and why (`admin access DEVICE`): the access policy's explanation
    /// (``AccessPolicy/explain(_:)``) for the enrolled device, or for the `[[user]]` of that name.
    package func access(device name: String) async throws -> AdminAPI.DeviceAccess {
        let subject: AccessSubject
        if let device = try await withIdentities({ try await $0.device(named: name) }) {
            subject = .device(id: device.id, name: device.name, tags: device.tags)
        } else if await policy.snapshot.users.contains(user: name) {
            subject = .user(name)
        } else {
            throw AdminError.unknownDevice(name)
        }
        let grants = await policy.snapshot.access.explain(subject).map { explanation in
            AdminAPI.DeviceAccess.Grant(
                subject: explanation.subject, pattern: explanation.pattern, partitions: explanation.yields,
                access: explanation.access.rawValue, problem: explanation.whyNot)
        }
        return AdminAPI.DeviceAccess(device: name, tags: subject.tags, grants: grants)
    }
}
