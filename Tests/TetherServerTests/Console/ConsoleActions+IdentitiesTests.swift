import Foundation
import Testing
import TetherProtocol
@testable import TetherServer

/// The console's enrollment actions and pages: each action asks for confirmation first, a
/// created key is shown once on its own page, devices are changed as `console`, and what an
/// operator typed stays text.
@Suite struct ConsoleActionsIdentitiesTests {
    @Test func aKeyIsCreatedAfterConfirmationAndShownOnce() async throws {
        try await IdentityFixture.with { f in
            let actions = ConsoleActions(control: f.control)
            let form = ["tags": "store=17 region=north", "uses": "3", "expires": "7d", "note": "shop <17>", "csrf": "c"]
            let confirm = await actions.run("create-enroll-key", form: ConsoleActionForm(form), csrf: "c").text
            #expect(confirm.contains("Confirm") && f.identities.snapshot.keys.isEmpty, "nothing made before the confirmation")
            #expect(confirm.contains("name=\"note\" value=\"shop &lt;17&gt;\""))
            var confirmed = form
            confirmed["confirmed"] = "yes"
            let page = await actions.run("create-enroll-key", form: ConsoleActionForm(confirmed), csrf: "c").text
            let key = try #require(f.identities.snapshot.keys.values.first)
            #expect(key.tags == ["store": "17", "region": "north"] && key.usesAllowed == 3 && key.createdBy == "console" && key.note == "shop <17>")
            let shown = try #require(page.range(of: "tek1.").map { String(page[$0.lowerBound...].prefix(65)) })
            let text = try #require(EnrollmentKeyText(parsing: shown))
            #expect(text.keyID == key.id && IdentitySecrets.digest(text.secret) == key.digest)
            // The list shows it without its secret.
            let list = ConsolePages.enrollment(
                try await f.control.enrollmentKeys(), identities: try await f.control.identities(after: nil, limit: 10), after: nil, csrf: "c").text
            #expect(list.contains(key.id) && !list.contains(text.secret) && list.contains("Revoke…"))
        }
    }

    @Test func badKeyFieldsAreRefusedWithWhatToType() async throws {
        try await IdentityFixture.with { f in
            let actions = ConsoleActions(control: f.control)
            for form in [["tags": "Store=1"], ["uses": "many"], ["expires": "soon"], ["tags": "store="]] {
                let page = await actions.run("create-enroll-key", form: ConsoleActionForm(form.merging(["confirmed": "yes"]) { a, _ in a }), csrf: "c").text
                #expect(page.contains("Refused"), "\(form)")
            }
            #expect(f.identities.snapshot.keys.isEmpty)
        }
    }

    @Test func devicesAreChangedAsTheConsole() async throws {
        try await IdentityFixture.with { f in
            let device = f.enrolled("till-1", tags: ["store": "1"])
            let actions = ConsoleActions(control: f.control)
            let base = ["device": "till-1", "device-id": device.id, "confirmed": "yes"]
            let tagged = await actions.run("tag-device", form: ConsoleActionForm(base.merging(["tags": "store=2, lane=a"]) { a, _ in a }), csrf: "c").text
            #expect(tagged.contains("lane=a,store=2") && tagged.contains("/console/devices/\(device.id)"))
            _ = await actions.run("rotate-device", form: ConsoleActionForm(base), csrf: "c").text
            #expect(f.identities.snapshot.devices[device.id]?.rotationPending == true)
            let confirm = await actions.run("revoke-device", form: ConsoleActionForm(["device": "till-1", "device-id": device.id]), csrf: "c").text
            #expect(confirm.contains("class=\"danger\"") && f.identities.snapshot.devices[device.id]?.revokedAt == nil)
            _ = await actions.run("revoke-device", form: ConsoleActionForm(base), csrf: "c").text
            #expect(f.identities.snapshot.devices[device.id]?.revokedAt != nil)
            let removed = await actions.run("remove-device", form: ConsoleActionForm(base), csrf: "c").text
            #expect(removed.contains("/console/enrollment") && f.identities.snapshot.devices.isEmpty)
            #expect(f.identities.snapshot.audit.map(\.actor).allSatisfy { $0 == "console" })
            #expect(f.identities.snapshot.audit.map(\.action) == ["device.tag", "device.rotate", "device.revoke", "device.remove"])
        }
    }

    @Test func aDevicesPageShowsItsEnrollmentAndActions() {
        let record = DeviceIdentityRecord(
            id: IdentityFixture.deviceID("x"), name: "till-1", tags: ["store": "1"], credentialDigest: [1], credentialIssuedAt: .now,
            createdAt: .now, enrolledWithKey: "00112233aabbccdd")
        let identity = AdminAPI.Identity(record, now: .now)
        let page = ConsolePages.device([], id: record.id, identity: identity, csrf: "c").text
        #expect(page.contains("Device till-1") && page.contains("store=1") && page.contains("00112233aabbccdd"))
        for action in ["tag-device", "rotate-device", "revoke-device", "remove-device"] { #expect(page.contains("/console/actions/\(action)")) }
        var revoked = identity
        revoked.state = "revoked"
        let revokedPage = ConsolePages.device([], id: record.id, identity: revoked, csrf: "c").text
        #expect(!revokedPage.contains("/console/actions/rotate-device") && revokedPage.contains("/console/actions/remove-device"))
        #expect(ConsolePages.device([], id: "nobody").text.contains("No device has the id"))
    }
}
