import Testing
import TetherProtocol
@testable import TetherAgent

/// What a device report says of the remote actions the device accepts (issue 49).
@Suite struct SyncAgentDeviceReportsTests {
    @Test func acceptedActionsGoOnlyToAServerSpeakingProtocol8() {
        var device = DeviceSettings(name: "till-07")
        #expect(SyncAgent.acceptedActions(device, serverProtocol: nil) == nil, "no welcome yet")
        #expect(SyncAgent.acceptedActions(device, serverProtocol: TetherVersion.remoteActions - 1) == nil)
        #expect(SyncAgent.acceptedActions(device, serverProtocol: TetherVersion.remoteActions) == RemoteActionKind.acceptedByDefault)
        device.remoteActions = []
        #expect(SyncAgent.acceptedActions(device, serverProtocol: TetherVersion.remoteActions + 1) == [], "none accepted is said too")
    }
}
