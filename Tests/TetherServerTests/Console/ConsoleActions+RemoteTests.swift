import Foundation
import HTTPTypes
import Testing
import TetherProtocol
@testable import TetherServer

/// Remote actions from the console, in process: a selection's confirmation shows how many
/// devices it takes and queues nothing; the confirmed request queues one action per entry as
/// `console`; the device's page lists them; an action needing a partition is refused without
/// one; a diagnostics report is shown escaped.
@Suite struct ConsoleActionsRemoteTests {
    @Test func aSelectionIsConfirmedWithItsCountThenQueued() async throws {
        try await ConsoleRoutesTests.withConsole { c in
            let now = c.fixture.clock.date
            try await c.fixture.storage.recordDeviceReports((0..<5).map { i in
                DeviceLedgerEntry(
                    deviceID: "id-\(i)", deviceName: "till-\(i)", user: "pos", release: "1.0", partition: i < 3 ? "store-\(i)" : "office",
                    state: i == 2 ? "synced" : "reset-pending", reportedAt: now - 60)
            })
            let (cookie, csrf) = c.signedIn()
            let (_, _, list) = try await c.get("/console/devices?partition=store-*&state=reset-pending", headers: cookie)
            #expect(list.contains("Ask these devices…") && list.contains("name=\"select-partition\" value=\"store-*\""))
            let form = "csrf=\(csrf)&kind=initiate-reset&select-partition=store-*&state=reset-pending"
            let (status, _, confirm) = try await c.post("/console/actions/remote-action", form: form, headers: cookie)
            #expect(status == .ok && confirm.contains("<h1>Confirm</h1>") && confirm.contains("2 device partitions now"))
            #expect(try await c.fixture.control.deviceActions(deviceID: "id-0").actions.isEmpty, "nothing queued before the confirmation")
            let (_, _, done) = try await c.post("/console/actions/remote-action", form: form + "&confirmed=yes", headers: cookie)
            #expect(done.contains("Asked 2 devices") && done.contains("/console/devices?partition=store-*&amp;state=reset-pending"))
            let queued = try await c.fixture.control.deviceActions(deviceID: "id-1").actions
            #expect(queued.map(\.action) == ["initiate-reset"] && queued.first?.partition == "store-1" && queued.first?.requestedBy == "console")
            #expect(try await c.fixture.control.deviceActions(deviceID: "id-3").actions.isEmpty, "another partition: not selected")
            let (_, _, page) = try await c.get("/console/devices/id-1", headers: cookie)
            #expect(page.contains("<h2>Remote actions</h2>") && page.contains("Ask the device…") && page.contains("initiate-reset"))
        }
    }

    @Test func aDevicesActionNeedingAPartitionIsRefusedWithoutOne() async throws {
        try await ConsoleRoutesTests.withConsole { c in
            try await c.fixture.storage.recordDeviceReports([
                DeviceLedgerEntry(deviceID: "id-0", deviceName: "till-0", user: "pos", release: "1.0", partition: "p", state: "synced", reportedAt: c.fixture.clock.date)
            ])
            let (cookie, csrf) = c.signedIn()
            let (_, _, refused) = try await c.post(
                "/console/actions/remote-action", form: "csrf=\(csrf)&kind=pause&device=id-0&device-id=id-0&partition=", headers: cookie)
            #expect(refused.contains("Refused") && refused.contains("needs a partition"))
            let (_, _, done) = try await c.post(
                "/console/actions/remote-action", form: "csrf=\(csrf)&kind=diagnostics&device=id-0&device-id=id-0&confirmed=yes", headers: cookie)
            #expect(done.contains("Asked 1 device") && done.contains("/console/devices/id-0"))
            #expect(try await c.fixture.control.deviceActions(deviceID: "id-0").actions.map(\.action) == ["diagnostics"])
        }
    }

    @Test func aDiagnosticsReportIsShownEscaped() {
        var action = AdminAPI.DeviceAction(
            DeviceActionRecord(
                device: DeviceKey(user: "pos", deviceID: "id-0"), deviceName: "till-0", kind: .diagnostics, partition: nil, requestedBy: "console",
                requestedAt: .now, expiresAt: .now))
        action.diagnostics = #"{"name":"<script>alert(1)</script>"}"#
        let page = ConsolePages.diagnostics(action).text
        #expect(page.contains("<pre id=\"diagnostics\"><code>{&quot;name&quot;:&quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;}</code></pre>"))
        #expect(!page.contains("<script>"))
    }
}
