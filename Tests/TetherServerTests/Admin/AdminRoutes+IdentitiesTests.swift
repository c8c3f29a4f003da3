import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// The admin API's enrollment routes through Hummingbird's router (HummingbirdTesting), over
/// an in-memory identity role: JSON in and out, the admin token required, refusals as
/// ``AdminAPI/Failure`` with their status.
@Suite struct AdminRoutesIdentitiesTests {
    static func withAPI(_ body: @escaping @Sendable (IdentityFixture, any TestClientProtocol) async throws -> Void) async throws {
        try await IdentityFixture.with { f in
            let router = Router(context: BasicRequestContext.self)
            AdminRoutes(control: f.control, dataDirectory: f.dir.path).register(on: router)
            try await Application(router: router).test(.router) { client in try await body(f, client) }
        }
    }

    static let auth: HTTPFields = [.authorization: "Bearer admin", .contentType: "application/json"]

    /// The answer to one request: its status and body.
    static func call(
        _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ json: String? = nil, headers: HTTPFields = auth
    ) async throws -> (HTTPResponse.Status, Data) {
        try await client.execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) }) { response in
            (response.status, Data(response.body.readableBytesView))
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T { try JSONDecoder().decode(type, from: data) }

    @Test func keysAreCreatedListedAndRevoked() async throws {
        try await Self.withAPI { f, client in
            let (status, data) = try await Self.call(
                client, .post, "/admin/enrollment-keys", #"{"tags":{"store":"17"},"uses":2,"expires_seconds":3600,"note":"shop"}"#)
            #expect(status == .ok)
            let created = try Self.decode(AdminAPI.EnrollmentKeyCreated.self, data)
            #expect(EnrollmentKeyText(parsing: created.key)?.keyID == created.enrollmentKey.id)
            #expect(created.enrollmentKey.usesAllowed == 2 && created.enrollmentKey.tags == ["store": "17"])
            let (_, listed) = try await Self.call(client, .get, "/admin/enrollment-keys")
            #expect(!String(decoding: listed, as: UTF8.self).contains(created.key), "the list never shows a key's secret")
            #expect(try Self.decode(AdminAPI.EnrollmentKeys.self, listed).keys.map(\.id) == [created.enrollmentKey.id])
            let (revokedStatus, revoked) = try await Self.call(client, .post, "/admin/enrollment-keys/\(created.enrollmentKey.id)/revoke")
            #expect(try revokedStatus == .ok && (Self.decode(AdminAPI.EnrollmentKey.self, revoked)).state == "revoked")
            let (again, failure) = try await Self.call(client, .post, "/admin/enrollment-keys/\(created.enrollmentKey.id)/revoke")
            #expect(try again == .conflict && (Self.decode(AdminAPI.Failure.self, failure)).hint != nil)
            let (unknown, _) = try await Self.call(client, .post, "/admin/enrollment-keys/0123456789abcdef/revoke")
            #expect(unknown == .notFound)
            let (bad, badBody) = try await Self.call(client, .post, "/admin/enrollment-keys", #"{"uses":2,"reusable":true}"#)
            #expect(try bad == .badRequest && (Self.decode(AdminAPI.Failure.self, badBody)).error.contains("reusable"))
            #expect(f.identities.snapshot.audit.map(\.actor) == ["admin", "admin"])
        }
    }

    @Test func devicesAreListedTaggedRotatedRevokedAndRemoved() async throws {
        try await Self.withAPI { f, client in
            f.enrolled("till-1", tags: ["store": "1"])
            f.enrolled("till-2")
            let (_, page) = try await Self.call(client, .get, "/admin/identities?limit=2")
            let first = try Self.decode(AdminAPI.Identities.self, page)
            #expect(first.identities.map(\.name) == ["pos", "till-1"] && first.nextAfter == "till-1")
            let (_, rest) = try await Self.call(client, .get, "/admin/identities?limit=2&after=till-1")
            #expect(try Self.decode(AdminAPI.Identities.self, rest).identities.map(\.name) == ["till-2"])
            let (_, one) = try await Self.call(client, .get, "/admin/identities/till-1")
            #expect(try Self.decode(AdminAPI.Identity.self, one).tags == ["store": "1"])
            let (_, tagged) = try await Self.call(client, .post, "/admin/identities/till-1/tags", #"{"set":{"lane":"a"},"remove":["store"]}"#)
            #expect(try Self.decode(AdminAPI.IdentityChanged.self, tagged).identity.tags == ["lane": "a"])
            let (badTag, _) = try await Self.call(client, .post, "/admin/identities/till-1/tags", #"{"set":{"Lane":"a"}}"#)
            #expect(badTag == .badRequest)
            let (_, rotated) = try await Self.call(client, .post, "/admin/identities/till-1/rotate")
            #expect(try Self.decode(AdminAPI.IdentityChanged.self, rotated).identity.rotationPending)
            let (_, revoked) = try await Self.call(client, .post, "/admin/identities/till-1/revoke")
            #expect(try Self.decode(AdminAPI.IdentityChanged.self, revoked).identity.state == "revoked")
            let (configured, _) = try await Self.call(client, .post, "/admin/identities/pos/revoke")
            #expect(configured == .conflict)
            let (removedStatus, removed) = try await Self.call(client, .delete, "/admin/identities/till-2")
            #expect(try removedStatus == .ok && (Self.decode(AdminAPI.IdentityChanged.self, removed)).identity.state == "removed")
            let (gone, _) = try await Self.call(client, .get, "/admin/identities/till-2")
            #expect(gone == .notFound)
            let (_, audit) = try await Self.call(client, .get, "/admin/audit?after=0&limit=10")
            #expect(try Self.decode(AdminAPI.Audit.self, audit).records.map(\.action) == ["device.tag", "device.rotate", "device.revoke", "device.remove"])
            let (badPage, _) = try await Self.call(client, .get, "/admin/audit?after=x")
            #expect(badPage == .badRequest)
        }
    }

    @Test func everyRouteWantsTheAdminToken() async throws {
        try await Self.withAPI { f, client in
            for (method, uri) in [
                (HTTPRequest.Method.get, "/admin/enrollment-keys"), (.post, "/admin/enrollment-keys"), (.get, "/admin/identities"),
                (.post, "/admin/identities/x/rotate"), (.delete, "/admin/identities/x"), (.get, "/admin/audit"),
            ] {
                let (status, _) = try await Self.call(client, method, uri, "{}", headers: [.authorization: "Bearer wrong"])
                #expect(status == .unauthorized, "\(method) \(uri)")
            }
            #expect(f.identities.snapshot.keys.isEmpty)
        }
    }

    @Test func accessExplainsEachGrantThatNamesTheDevice() async throws {
        try await Self.withAPI { f, client in
            f.enrolled("till-1", tags: ["store": "1"])
            for (subject, pattern) in [("tag:store=1", "store-{tag:store}"), ("device:*", "lane-{tag:lane}"), ("tag:store=2", "other")] {
                let body = #"{"user":"\#(subject)","pattern":"\#(pattern)","access":"readwrite"}"#
                let (status, _) = try await Self.call(client, .post, "/admin/grants", body)
                #expect(status == .ok, "grant \(subject) \(pattern)")
            }
            let (status, data) = try await Self.call(client, .get, "/admin/identities/till-1/access")
            #expect(status == .ok)
            let access = try Self.decode(AdminAPI.DeviceAccess.self, data)
            #expect(access.device == "till-1" && access.tags == ["store": "1"])
            let byPattern = Dictionary(uniqueKeysWithValues: access.grants.map { ($0.pattern, $0) })
            #expect(byPattern["store-{tag:store}"]?.partitions == "store-1" && byPattern["store-{tag:store}"]?.problem == nil)
            #expect(byPattern["lane-{tag:lane}"]?.partitions == nil && byPattern["lane-{tag:lane}"]?.problem != nil)
            #expect(byPattern["other"] == nil, "a grant to another tag does not name the device")
            let (unknown, _) = try await Self.call(client, .get, "/admin/identities/nobody/access")
            #expect(unknown == .notFound)
        }
    }
}
