import Foundation
import Testing
import TetherProtocol
@testable import TetherServer

/// ``AccessPolicy`` with the subjects and templates of issue 48: `tag:K=V`, `device:*`,
/// `{name}`, `{id}`, `{tag:K}`, and ``AccessPolicy/explain(_:)``.
@Suite struct AccessPolicyTests {
    // Moved from ServerConfigurationTests.swift: grants of users, as before issue 48.
    let store = PartitionName("store-17")!
    let catalog = PartitionName("catalog-eu")!

    func grant(_ user: String, _ patterns: [String], _ access: PartitionAccess) -> ServerConfiguration.Grant {
        ServerConfiguration.Grant(user: user, patterns: patterns.map { try! GrantPattern.parse($0).get() }, access: access)
    }

    @Test func theBestGrantWins() {
        let policy = AccessPolicy(configured: [grant("u", ["catalog-*"], .read), grant("u", ["catalog-eu"], .readwrite)], runtime: [])
        #expect(policy.access(user: "u", partition: catalog) == .readwrite)
        #expect(policy.access(user: "u", partition: store) == nil)
        #expect(policy.access(user: "v", partition: catalog) == nil)
    }

    @Test func runtimeGrantsAndRevocationsOverlayTheConfig() throws {
        let pattern = try GrantPattern.parse("catalog-*").get()
        let policy = AccessPolicy(
            configured: [grant("u", ["catalog-*"], .readwrite)],
            runtime: [RuntimeGrant(user: "u", pattern: pattern, access: nil), RuntimeGrant(user: "u", pattern: try GrantPattern.parse("store-*").get(), access: .read)])
        #expect(policy.access(user: "u", partition: catalog) == nil)
        #expect(policy.access(user: "u", partition: store) == .read)
    }

    static func pattern(_ text: String) -> GrantPattern { try! GrantPattern.parse(text).get() }

    static func policy(_ grants: [(String, String, PartitionAccess)], runtime: [RuntimeGrant] = []) -> AccessPolicy {
        AccessPolicy(
            configured: grants.map { ServerConfiguration.Grant(user: $0.0, patterns: [pattern($0.1)], access: $0.2) }, runtime: runtime)
    }

    static let till17 = AccessSubject.device(id: "0123456789abcdef0123456789abcdef", name: "till-1", tags: ["store": "17", "role": "pos"])
    static let till18 = AccessSubject.device(id: "fedcba9876543210fedcba9876543210", name: "till-2", tags: ["store": "18"])
    static let untagged = AccessSubject.device(id: "00000000000000000000000000000001", name: "kiosk", tags: [:])

    func access(_ policy: AccessPolicy, _ subject: AccessSubject, _ partition: String) -> PartitionAccess? {
        policy.access(subject, partition: PartitionName(partition)!)
    }

    @Test func userGrantsWorkAsBefore() {
        let policy = Self.policy([("pos", "store-*", .readwrite), ("pos", "catalog", .read), ("other", "x", .read)])
        #expect(policy.access(user: "pos", partition: PartitionName("store-1")!) == .readwrite)
        #expect(policy.access(user: "pos", partition: PartitionName("catalog")!) == .read)
        #expect(policy.access(user: "pos", partition: PartitionName("x")!) == nil)
        #expect(policy.access(user: "nobody", partition: PartitionName("x")!) == nil)
    }

    @Test func aTagGrantCoversTheDevicesWithThatTagOnly() {
        let policy = Self.policy([("tag:store=17", "store-17", .readwrite)])
        #expect(access(policy, Self.till17, "store-17") == .readwrite)
        #expect(access(policy, Self.till18, "store-17") == nil)
        #expect(access(policy, Self.untagged, "store-17") == nil)
        // A user is never covered by a tag grant, even one named like the device.
        #expect(access(policy, .user("till-1"), "store-17") == nil)
    }

    @Test func anAllDevicesGrantCoversEveryDeviceAndNoUser() {
        let policy = Self.policy([("device:*", "catalog", .read)])
        for device in [Self.till17, Self.till18, Self.untagged] { #expect(access(policy, device, "catalog") == .read) }
        #expect(access(policy, .user("pos"), "catalog") == nil)
    }

    @Test func aNameGrantCoversTheDeviceOfThatName() {
        let policy = Self.policy([("till-1", "debug-*", .readwrite)])
        #expect(access(policy, Self.till17, "debug-1") == .readwrite)
        #expect(access(policy, Self.till18, "debug-1") == nil)
    }

    @Test func templatesAreFilledInPerSubject() {
        let policy = Self.policy([
            ("tag:role=pos", "store-{tag:store}", .readwrite), ("device:*", "device-{name}", .readwrite),
            ("device:*", "id-{id}", .read), ("pos", "user-{name}", .read),
        ])
        #expect(access(policy, Self.till17, "store-17") == .readwrite)
        #expect(access(policy, Self.till17, "store-18") == nil)
        #expect(access(policy, Self.till18, "store-18") == nil)  // no role=pos
        #expect(access(policy, Self.till17, "device-till-1") == .readwrite)
        #expect(access(policy, Self.till17, "device-till-2") == nil)
        #expect(access(policy, Self.till17, "id-0123456789abcdef0123456789abcdef") == .read)
        #expect(access(policy, .user("pos"), "user-pos") == .read)
    }

    @Test func aSubjectLackingWhatATemplateNamesGetsNothingFromIt() {
        let policy = Self.policy([("device:*", "store-{tag:store}", .readwrite), ("pos", "id-{id}", .read), ("pos", "t-{tag:store}", .read)])
        #expect(access(policy, Self.untagged, "store-") == nil)
        #expect(policy.patterns(for: Self.untagged).isEmpty)
        #expect(policy.patterns(for: .user("pos")).isEmpty)
    }

    @Test func templatesMayMakeGlobs() {
        let policy = Self.policy([("device:*", "store-{tag:store}-*", .read)])
        #expect(access(policy, Self.till17, "store-17-a") == .read)
        #expect(access(policy, Self.till17, "store-18-a") == nil)
        #expect(policy.patterns(for: Self.till17).map(\.text) == ["store-17-*"])
    }

    @Test func anExpansionThatIsNoPartitionNameGivesNothing() {
        let long = AccessSubject.device(
            id: "0123456789abcdef0123456789abcdef", name: String(repeating: "n", count: 64), tags: ["t": String(repeating: "v", count: 64)])
        let policy = Self.policy([("device:*", "{name}-{tag:t}-x", .readwrite)])
        // 64 + 1 + 64 + 2 = 131 characters: longer than a partition name may be.
        guard case .illegal(let text) = Self.pattern("{name}-{tag:t}-x").expanded(for: long) else {
            Issue.record("not illegal")
            return
        }
        #expect(text.utf8.count == 131)
        #expect(policy.patterns(for: long).isEmpty)
        let explained = policy.explain(long)
        #expect(explained.count == 1 && explained[0].yields == nil)
        #expect(explained[0].whyNot?.contains("is not a legal partition name") == true)
    }

    @Test func runtimeGrantsAndRevocationsApplyToNewSubjects() {
        let revoke = RuntimeGrant(user: "tag:store=17", pattern: Self.pattern("store-{tag:store}"), access: nil)
        let add = RuntimeGrant(user: "device:*", pattern: Self.pattern("shared"), access: .read)
        let policy = Self.policy([("tag:store=17", "store-{tag:store}", .readwrite)], runtime: [revoke, add])
        #expect(access(policy, Self.till17, "store-17") == nil)
        #expect(access(policy, Self.till17, "shared") == .read)
    }

    @Test func theBestAccessWins() {
        let policy = Self.policy([("device:*", "store-*", .read), ("tag:store=17", "store-{tag:store}", .readwrite)])
        #expect(access(policy, Self.till17, "store-17") == .readwrite)
        #expect(access(policy, Self.till17, "store-99") == .read)
    }

    @Test func explainListsEachGrantForTheSubjectWithWhatItYields() {
        let policy = Self.policy([
            ("tag:store=17", "store-{tag:store}", .readwrite), ("device:*", "shared", .read), ("device:*", "zone-{tag:zone}", .read),
            ("till-1", "id-{id}", .read), ("tag:store=18", "other", .read), ("pos", "catalog", .read),
        ])
        let lines = policy.explain(Self.till17).map { "\($0.subject) \($0.pattern) \($0.access.rawValue) \($0.yields ?? "-") \($0.whyNot ?? "")" }
        #expect(lines == [
            "device:* shared read shared ",
            "device:* zone-{tag:zone} read - {tag:zone}: device till-1 has no tag zone",
            "tag:store=17 store-{tag:store} readwrite store-17 ",
            "till-1 id-{id} read id-0123456789abcdef0123456789abcdef ",
        ])
        #expect(policy.explain(.user("pos")).map(\.yields) == ["catalog"])
        #expect(policy.explain(.user("nobody")).isEmpty)
    }

    @Test func grantPatternsAcceptTheTemplatesOnly() {
        for good in ["store-{tag:store}", "{name}", "device-{id}", "a-{name}-{tag:zone_1}-*"] {
            #expect((try? GrantPattern.parse(good).get())?.isTemplate == true, "\(good)")
        }
        #expect((try? GrantPattern.parse("store-*").get())?.isTemplate == false)
        for bad in ["store-{tag:Store}", "store-{tag:}", "store-{user}", "store-{name", "store-name}", "{}", "store-{ name}"] {
            guard case .failure = GrantPattern.parse(bad) else { Issue.record("\(bad) parsed"); continue }
        }
    }
}
