import Foundation
import Testing
import TetherProtocol
import TetherServer

@Suite struct BindRulesTests {
    let users = UserDirectory(entries: [("pos", "good")])
    let policy = AccessPolicy(
        configured: [ServerConfiguration.Grant(user: "pos", patterns: [try! GrantPattern.parse("store-*").get()], access: .readwrite)],
        runtime: [])
    static let v1 = Schema(version: 1, tables: [TableSchema(name: "t", primaryKey: "id", columns: [
        ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "a", type: .text), ColumnSchema(name: "b", type: .real, nullable: true),
    ])])
    let schemas = SchemaRegistry(history: [SchemaRecord(schema: v1, isBreaking: false, appliedAt: Date())])

    func authorize(_ request: BindRequest, flags: ServerFlags = ServerFlags(), schemas: SchemaRegistry? = nil) -> SyncErrorCode? {
        switch BindRules.authorize(request, users: users, policy: policy, flags: flags, schemas: schemas ?? self.schemas) {
        case .success: nil
        case .failure(let error): error.code
        }
    }

    func request(partition: String = "store-1", token: String = "good", schemaVersion: Int = 1) -> BindRequest {
        BindRequest(session: 1, partition: partition, token: token, identity: nil, schemaVersion: schemaVersion)
    }

    @Test func checksInOrder() {
        #expect(authorize(request()) == nil)
        #expect(authorize(request(partition: "-bad", token: "bad")) == .illegalPartitionName)
        #expect(authorize(request(token: "bad")) == .badUserAuthentication)
        #expect(authorize(request(), flags: ServerFlags(syncTerminated: true)) == .otherSessionError)
        #expect(authorize(request(partition: "catalog")) == .permissionDenied)
        #expect(authorize(request(schemaVersion: 9)) == .badSchemaVersion)
        #expect(authorize(request(schemaVersion: 0)) == nil)
    }

    @Test func identityAndVersionChecks() {
        let identity = ClientFileIdentity(id: 5, salt: 50)
        let record = ClientFileRecord(identity: identity, integratedSeq: 0, integratedVersion: 0, lastSeen: Date())
        let head = PartitionHead(latest: ServerVersion(version: 10, salt: 100), base: ServerVersion(version: 4, salt: 40))
        func verify(_ identity: ClientFileIdentity?, _ version: ServerVersion, salt: Int64?) -> SyncErrorCode? {
            var request = request()
            request.identity = identity
            request.lastServerVersion = version
            return BindRules.verify(request, clientFile: record, head: head, saltAtVersion: salt)?.code
        }
        #expect(verify(nil, .none, salt: nil) == nil)
        #expect(verify(identity, ServerVersion(version: 6, salt: 60), salt: 60) == nil)
        #expect(verify(ClientFileIdentity(id: 5, salt: 51), ServerVersion(version: 6, salt: 60), salt: 60) == .badClientFileIdentifier)
        #expect(verify(identity, ServerVersion(version: 11, salt: 1), salt: nil) == .divergingHistories)
        #expect(verify(identity, ServerVersion(version: 6, salt: 61), salt: 60) == .divergingHistories)
        #expect(verify(identity, ServerVersion(version: 3, salt: 30), salt: nil) == .clientFileExpired)
        #expect(verify(identity, ServerVersion(version: 4, salt: 40), salt: 40) == nil)
        var unknown = request()
        unknown.identity = identity
        #expect(BindRules.verify(unknown, clientFile: nil, head: head, saltAtVersion: nil)?.code == .badClientFileIdentifier)
    }

    @Test func recoveryPolicyOnlyChangesResets() {
        let reset = SyncError(.divergingHistories, "x")
        #expect(BindRules.applyRecoveryPolicy(reset, recoveryEnabled: false).action == .clientResetNoRecovery)
        #expect(BindRules.applyRecoveryPolicy(reset, recoveryEnabled: true).action == .clientReset)
        #expect(BindRules.applyRecoveryPolicy(SyncError(.permissionDenied, "x"), recoveryEnabled: false).action == .deleteStore)
    }

    @Test func recoverySettingFollowsTheConfigUntilOverridden() {
        func snapshot(_ flags: ServerFlags, configured: Bool) -> PolicySnapshot {
            PolicySnapshot(
                users: users, adminToken: TokenDigest(token: "a"), configuredGrants: [], runtimeGrants: [], access: policy,
                flags: flags, configuredRecovery: configured, schemas: schemas)
        }
        #expect(snapshot(ServerFlags(), configured: false).recoveryEnabled == false)
        #expect(snapshot(ServerFlags(recoveryOverride: true, recoveryOverrideConfigValue: false), configured: false).recoveryEnabled)
        // The config value changed since the override was set: the config wins.
        #expect(snapshot(ServerFlags(recoveryOverride: false, recoveryOverrideConfigValue: false), configured: true).recoveryEnabled)
    }

    // MARK: Enrolled devices (issue 48)

    static let device = AccessSubject.device(id: "0123456789abcdef0123456789abcdef", name: "till-1", tags: ["store": "17"])
    let devicePolicy = AccessPolicy(
        configured: [], runtime: [RuntimeGrant(user: "tag:store=17", pattern: try! GrantPattern.parse("store-{tag:store}").get(), access: .readwrite)])

    @Test func aDeviceIsAuthorizedByItsTagsAndTemplates() {
        func authorize(_ partition: String, _ subject: AccessSubject?) -> Result<BindRules.Authorized, SyncError> {
            BindRules.authorize(request(partition: partition, token: "tdc1…"), subject: subject, policy: devicePolicy, flags: ServerFlags(), schemas: schemas)
        }
        guard case .success(let authorized) = authorize("store-17", Self.device) else { Issue.record("refused"); return }
        #expect(authorized.user == "till-1" && authorized.access == .readwrite && authorized.subject == Self.device)
        guard case .failure(let denied) = authorize("store-18", Self.device) else { Issue.record("accepted"); return }
        #expect(denied.code == .permissionDenied && denied.message == "device till-1 has no grant for partition store-18")
        guard case .failure(let unknown) = authorize("store-17", nil) else { Issue.record("accepted"); return }
        #expect(unknown.code == .badUserAuthentication)
    }

    @Test func aDevicesSessionFollowsItsRecord() {
        let session = BoundSession(
            key: SessionKey(connection: 1, session: 1), partition: PartitionName("store-17")!, clientFile: 1, user: "till-1",
            tokenDigest: TokenDigest(token: "tdc1…"), access: .readwrite, subject: Self.device) { _ in }
        var record = DeviceIdentityRecord(
            id: Self.device.deviceID!, name: "till-1", tags: ["store": "17"], credentialDigest: [], credentialIssuedAt: Date(),
            createdAt: Date(), enrolledWithKey: nil)
        #expect(BindRules.revalidate(session, device: record, policy: devicePolicy) == nil)
        #expect(BindRules.revalidate(session, device: nil, policy: devicePolicy)?.code == .badUserAuthentication)
        var revoked = record
        revoked.revokedAt = Date()
        #expect(BindRules.revalidate(session, device: revoked, policy: devicePolicy)?.code == .badUserAuthentication)
        record.tags = ["store": "18"]
        #expect(BindRules.revalidate(session, device: record, policy: devicePolicy)?.retryAfterMilliseconds == 0)
        // The users' directory does not know devices: a policy re-check does not end the session.
        let snapshot = PolicySnapshot(
            users: users, adminToken: TokenDigest(token: "a"), configuredGrants: [], runtimeGrants: [], access: devicePolicy,
            flags: ServerFlags(), configuredRecovery: true, schemas: schemas)
        #expect(BindRules.revalidate(session, against: snapshot) == nil)
        let withoutGrant = PolicySnapshot(
            users: users, adminToken: TokenDigest(token: "a"), configuredGrants: [], runtimeGrants: [], access: policy,
            flags: ServerFlags(), configuredRecovery: true, schemas: schemas)
        #expect(BindRules.revalidate(session, against: withoutGrant)?.code == .permissionDenied)
    }
}

@Suite struct SchemaRegistryTests {
    static let v1 = BindRulesTests.v1
    static let v2 = Schema(version: 2, tables: v1.tables + [TableSchema(name: "u", primaryKey: "k", columns: [ColumnSchema(name: "k", type: .text)])])
    static let v3 = Schema(version: 3, tables: [TableSchema(name: "t", primaryKey: "id", columns: [ColumnSchema(name: "id", type: .integer)])])

    func registry(_ records: [(Schema, Bool)]) -> SchemaRegistry {
        SchemaRegistry(history: records.map { SchemaRecord(schema: $0.0, isBreaking: $0.1, appliedAt: Date()) })
    }

    @Test func storeSchemaVersions() {
        let nonBreaking = registry([(Self.v1, false), (Self.v2, false)])
        #expect(nonBreaking.problem(storeSchemaVersion: 0) == nil)
        #expect(nonBreaking.problem(storeSchemaVersion: 1) == nil)
        #expect(nonBreaking.problem(storeSchemaVersion: 2) == nil)
        #expect(nonBreaking.problem(storeSchemaVersion: 3)?.code == .badSchemaVersion)
        let breaking = registry([(Self.v1, false), (Self.v2, false), (Self.v3, true)])
        #expect(breaking.problem(storeSchemaVersion: 1)?.code == .badSchemaVersion)
        #expect(breaking.problem(storeSchemaVersion: 2)?.message.contains("version 3") == true)
        #expect(breaking.problem(storeSchemaVersion: 3) == nil)
        #expect(registry([(Self.v2, false)]).problem(storeSchemaVersion: 1)?.code == .badSchemaVersion)
    }

    @Test func plans() {
        let current = registry([(Self.v1, false)])
        #expect(current.plan(Self.v2).refusal == nil && !current.plan(Self.v2).isBreaking)
        #expect(current.plan(Self.v3).isBreaking)
        #expect(current.plan(Self.v1).refusal != nil)
        #expect(current.plan(Schema(version: 5, tables: [])).refusal != nil)
    }

    @Test func uploadsMustFitTheSchema() {
        let current = registry([(Self.v1, false)])
        func code(_ change: RowChange) -> SyncErrorCode? { current.problem(upload: Changeset([change]))?.code }
        #expect(code(.insert("t", .integer(1), ["a": .text("x"), "b": .null])) == nil)
        #expect(code(.insert("t", .integer(1), ["id": .integer(1), "a": .text("x")])) == nil)
        #expect(code(.insert("t", .integer(1), ["id": .integer(2)])) == .invalidSchemaChange)
        #expect(code(.insert("x", .integer(1), [:])) == .invalidSchemaChange)
        #expect(code(.insert("t", .text("1"), [:])) == .invalidSchemaChange)
        #expect(code(.update("t", .integer(1), ["zzz": .integer(1)])) == .invalidSchemaChange)
        #expect(code(.update("t", .integer(1), ["a": .integer(1)])) == .invalidSchemaChange)
        #expect(code(.update("t", .integer(1), ["a": .null])) == .invalidSchemaChange)
        #expect(code(.update("t", .integer(1), ["b": .integer(2)])) == nil)
        #expect(code(.delete("t", .integer(1))) == nil)
        // An insert without a non-nullable column: agents would refuse to apply it, so the
        // server refuses it too (one rule, SchemaFit).
        #expect(code(.insert("t", .integer(1), ["b": .null])) == .invalidSchemaChange)
        #expect(current.problem(upload: Changeset([.insert("t", .integer(1), [:])]))?.message.contains("t.a is not nullable") == true)
    }

    @Test func migrationMakesRowsFitABreakingSchema() {
        let new = Schema(version: 2, tables: [TableSchema(name: "t", primaryKey: "id", columns: [
            ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "a", type: .integer), ColumnSchema(name: "c", type: .boolean),
            ColumnSchema(name: "d", type: .blob, nullable: true),
        ])])
        let migration = StateMigration(from: Self.v1, to: new)
        #expect(migration.migrate(table: "t", key: .integer(1), fields: ["a": .integer(3), "b": .real(1)])
            == ["a": .integer(3), "c": .integer(0), "d": .null])
        #expect(migration.migrate(table: "t", key: .integer(1), fields: ["a": .text("x")])?["a"] == .integer(0))
        #expect(migration.migrate(table: "gone", key: .integer(1), fields: [:]) == nil)
        #expect(migration.migrate(table: "t", key: .text("k"), fields: [:]) == nil)
    }
}
