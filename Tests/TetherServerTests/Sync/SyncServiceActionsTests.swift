import Foundation
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// ``SyncService/deliverPendingActions(toDeviceIDs:)`` in process: an action goes to the
/// connection whose accepted report speaks for its device, found in the hub's index of devices
/// (``SyncHub/actionConnections(forDeviceIDs:)``), never to another device's; a connection that
/// has had an action is not sent it again; a closed connection leaves the index.
@Suite(.timeLimit(.minutes(1))) struct SyncServiceActionsTests {
    static let till = "0123456789abcdef0123456789abcdef"
    static let other = "fedcba9876543210fedcba9876543210"

    static func report(_ deviceID: String) -> ClientMessage {
        .report(DeviceReport(
            token: InProcessSync.token, deviceID: deviceID, deviceName: "till-\(deviceID.prefix(4))", release: "0.1.0",
            entries: [DeviceReport.Entry(partition: "store-1", state: "syncing")], acceptedActions: RemoteActionKind.acceptedByDefault))
    }

    static func queue(_ kind: RemoteActionKind, for deviceID: String, in sync: InProcessSync) async throws -> DeviceActionRecord {
        let record = DeviceActionRecord(
            device: DeviceKey(user: "pos", deviceID: deviceID), deviceName: "till", kind: kind, partition: nil, requestedBy: "admin",
            requestedAt: Date(), expiresAt: Date().addingTimeInterval(3600))
        let queued = try await sync.storage.queueActions([record], maxPendingPerDevice: 32) { records in
            DeviceActionAudit.requested(records, selection: nil, actor: "admin", at: Date())
        }
        return try #require(queued.first)
    }

    @Test func anActionGoesToTheConnectionThatSpeaksForItsDeviceOnlyOnce() async throws {
        try await InProcessSync.run { sync, client in
            try await client.sync { socket in
                let first = try await Self.queue(.retryNow, for: Self.till, in: sync)
                _ = try await Self.queue(.retryNow, for: Self.other, in: sync)
                try await socket.hello()
                try await socket.send(Self.report(Self.till))
                let sent = try await socket.next("the action due on the report") { if case .action(let action) = $0 { action } else { nil } }
                #expect(sent.id == first.id && sent.kind == .retryNow)
                #expect(await sync.service.hub.actionDeviceCount == 1)
                #expect(await sync.service.deliverPendingActions(toDeviceIDs: [Self.till, Self.other]) == 0, "sent once per connection; the other device is away")
                let second = try await Self.queue(.diagnostics, for: Self.till, in: sync)
                #expect(await sync.service.deliverPendingActions() == 1)
                let next = try await socket.next("the second action") { if case .action(let action) = $0 { action } else { nil } }
                #expect(next.id == second.id && next.kind == .diagnostics)
                let pending = try await sync.storage.pendingActions(for: [DeviceKey(user: "pos", deviceID: Self.till)], now: Date())
                #expect(pending.map(\.state) == [.sent, .sent])
            }
            try await eventually("the closed connection out of the index", timeout: .seconds(30)) {
                await sync.service.hub.actionDeviceCount == 0
            }
        }
    }

    @Test func aSecondReportForTheSameDeviceKeepsOneEntryAndAnotherDeviceMovesIt() async throws {
        try await InProcessSync.run { sync, client in
            try await client.sync { socket in
                try await socket.hello()
                try await socket.send(Self.report(Self.till))
                try await socket.send(Self.report(Self.till))
                try await eventually("the report's device in the hub's index", timeout: .seconds(30)) {
                    await sync.service.hub.actionConnections(forDeviceIDs: [Self.till]).values.map(\.count) == [1]
                }
                try await socket.send(Self.report(Self.other))
                try await eventually("the connection now speaks for the other device", timeout: .seconds(30)) {
                    await sync.service.hub.actionConnections(forDeviceIDs: [Self.other]).count == 1
                }
                #expect(await sync.service.hub.actionConnections(forDeviceIDs: [Self.till]).isEmpty)
                #expect(await sync.service.hub.actionDeviceCount == 1)
            }
        }
    }
}
