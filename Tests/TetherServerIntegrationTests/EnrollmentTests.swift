import Foundation
import Logging
import Testing
import TetherProtocol
import TetherServer
import TetherSyncClient
import TetherTestSupport
import TetherTestTraits

/// `POST /enroll` on real `tether-server` processes (issue 48; docs/server.md "Enrollment and
/// device credentials"), on SQLite and on two PostgreSQL instances sharing a database: a
/// single-use key raced on both enrolls one device, and the credential binds what the device's
/// tags grant.
@Suite(.postgresCluster) struct EnrollmentTests {
    /// Grants for enrolled devices, in the config file.
    static let grants = """

        [[grant]]
        user = "tag:store=17"
        partitions = ["store-{tag:store}"]
        access = "readwrite"

        [[grant]]
        user = "device:*"
        partitions = ["catalog-*"]
        access = "read"

        """

    static let devices = ["0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"]

    enum Backend: String, CaseIterable, Sendable { case sqlite, postgresql }

    /// One server on SQLite, or two on one PostgreSQL database; `body` gets the servers and the
    /// storage (opened by the test beside them) to create keys in.
    func withServers(_ backend: Backend, _ body: ([ServerProcess], any IdentityStorage) async throws -> Void) async throws {
        var servers: [ServerProcess] = []
        let database = backend == .postgresql ? try await PostgresDatabase.make() : nil
        defer { database?.remove() }
        do {
            for _ in 0..<(database == nil ? 1 : 2) {
                servers.append(try await ServerProcess(extraConfig: Self.grants + (database?.storageTable() ?? "")))
            }
            if let database {
                let storage = try PostgresServerStorage(
                    location: PostgresLocation(
                        host: database.cluster.host, port: database.cluster.port, user: database.cluster.user, database: database.name,
                        tls: .disable),
                    password: Secret(database.cluster.password), maximumConnections: 2, logger: Logger(label: "tether.test.enrollment"))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await storage.run() }
                    defer { group.cancelAll() }
                    try await body(servers, storage)
                }
            } else {
                let storage = try SQLiteServerStorage(directory: servers[0].directory + "/data")
                try await body(servers, storage)
                try await storage.close()
            }
            for server in servers { await server.shutdown() }
        } catch {
            for server in servers {
                print("--- server log \(server.directory):\n\(server.log.suffix(4000))")
                await server.shutdown()
            }
            throw error
        }
    }

    static func createKey(_ storage: any IdentityStorage, uses: Int?) async throws -> EnrollmentKeyText {
        let (key, digest) = CredentialMinter.enrollmentKey()
        try await storage.createEnrollmentKey(
            EnrollmentKeyRecord(
                id: key.keyID, digest: digest, tags: ["store": "17"], usesAllowed: uses, expiresAt: nil, note: "test", createdAt: Date(),
                createdBy: "admin"),
            audit: AuditRecord(at: Date(), actor: "admin", action: "enroll-key.create", subject: key.keyID, detail: ""))
        return key
    }

    static func enroll(_ server: ServerProcess, key: EnrollmentKeyText, device: String, name: String?) throws -> (status: Int, head: String, body: String) {
        let request = EnrollmentRequest(key: key.text, deviceID: device, name: name, release: "0.9.0")
        return try PlainSocket.post(port: server.port, path: "/enroll", json: String(decoding: try JSONEncoder().encode(request), as: UTF8.self))
    }

    @Test(arguments: Backend.allCases)
    func aSingleUseKeyRacedOnEveryInstanceEnrollsOneDevice(_ backend: Backend) async throws {
        try await withServers(backend) { servers, storage in
            let key = try await Self.createKey(storage, uses: 1)
            let first = servers[0], second = servers[servers.count - 1]
            async let one = Self.enroll(first, key: key, device: Self.devices[0], name: "till-1")
            async let two = Self.enroll(second, key: key, device: Self.devices[1], name: "till-2")
            let answers = try await [one, two]
            #expect(answers.map(\.status).sorted() == [201, 403], "\(answers)")
            let refused = try #require(answers.first { $0.status == 403 })
            #expect(try JSONDecoder().decode(EnrollmentFailure.self, from: Data(refused.body.utf8)).error.code == .usedUpKey)
            #expect(try await storage.deviceCount() == 1)
            #expect(try await storage.enrollmentKeys().first?.usesSpent == 1)
            let enrolled = try #require(answers.first { $0.status == 201 })
            let response = try JSONDecoder().decode(EnrollmentResponse.self, from: Data(enrolled.body.utf8))
            #expect(response.tags == ["store": "17"])
            // The log names the device and the key's id, never the key nor the credential.
            let logs = servers.map(\.log).joined()
            #expect(logs.contains("device enrolled") && logs.contains(key.keyID) && logs.contains(response.name))
            #expect(!logs.contains(key.secret) && !logs.contains(DeviceCredential(parsing: response.credential)!.secret))
        }
    }

    @Test(arguments: Backend.allCases)
    func theCredentialBindsWhatTheDevicesTagsGrantOnEveryInstance(_ backend: Backend) async throws {
        try await withServers(backend) { servers, storage in
            let key = try await Self.createKey(storage, uses: nil)
            let answer = try Self.enroll(servers[0], key: key, device: Self.devices[0], name: nil)
            #expect(answer.status == 201, "\(answer)")
            let credential = try JSONDecoder().decode(EnrollmentResponse.self, from: Data(answer.body.utf8)).credential
            for server in servers {
                let reply = try await withConnection(server) { connection in
                    try await TestDevice(partition: "store-17", token: credential).bind(on: connection)
                }
                #expect(reply.access == .readwrite)
                let shared = try await withConnection(server) { connection in
                    try await TestDevice(partition: "catalog-1", token: credential).bind(on: connection)
                }
                #expect(shared.access == .read)
                await #expect(throws: SyncError.self) {
                    try await withConnection(server) { connection in
                        _ = try await TestDevice(partition: "store-18", token: credential).bind(on: connection)
                    }
                }
            }
            // The same device again: 200 and a new credential; the old one is refused everywhere.
            let again = try Self.enroll(servers[servers.count - 1], key: key, device: Self.devices[0], name: nil)
            #expect(again.status == 200, "\(again)")
            for server in servers {
                _ = try await eventually("the old credential to be refused", timeout: .seconds(10)) { () async throws -> Bool? in
                    do {
                        _ = try await withConnection(server) { connection in
                            try await TestDevice(partition: "catalog-1", token: credential).bind(on: connection)
                        }
                        return nil
                    } catch let error as SyncError where error.code == .badUserAuthentication {
                        return true
                    }
                }
            }
        }
    }

    @Test func anOversizedOrMalformedRequestIsRefused() async throws {
        try await withServers(.sqlite) { servers, _ in
            let malformed = try PlainSocket.post(port: servers[0].port, path: "/enroll", json: "not json")
            #expect(malformed.status == 400, "\(malformed)")
            #expect(malformed.head.lowercased().contains("content-type: application/json"))
            #expect(try JSONDecoder().decode(EnrollmentFailure.self, from: Data(malformed.body.utf8)).error.code == .malformed)
            // Over 4 KiB: 413 (the listener's [limits] answer it before the route reads a byte).
            let big = try PlainSocket.post(port: servers[0].port, path: "/enroll", json: String(repeating: "x", count: 5000))
            #expect(big.status == 413, "\(big.head)")
        }
    }
}
