import Foundation
import Logging
import TetherProtocol

/// Remote actions on the sync side (docs/server.md, "Remote actions"): the pending actions of a
/// device go to its connections here once one of its reports was accepted on them (the report
/// names the device; an enrolled device's credential proves it), when they are queued (here, or
/// on another instance, which announces it), and on a sweep; its answers are kept with an audit
/// record.
extension SyncService {
    /// Sends the pending actions of the devices connected here — those with an id in
    /// `deviceIDs`, or every device with pending actions when nil — that their connections
    /// have not sent yet, and marks them sent. Returns how many were sent. A storage failure is
    /// logged; the next report, request or sweep tries again. The connections are found in the
    /// hub's index of devices (``SyncHub/actionConnections(forDeviceIDs:)``): the cost follows
    /// the devices named, not the connections open.
    @discardableResult
    package func deliverPendingActions(toDeviceIDs deviceIDs: Set<String>? = nil) async -> Int {
        let connections: [DeviceKey: [ServerConnection]]
        if let deviceIDs {
            connections = await hub.actionConnections(forDeviceIDs: deviceIDs)
        } else {
            do {
                let waiting = try await storage.actions.devicesWithPendingActions(now: now(), limit: Self.pendingDevicesLimit)
                connections = await hub.actionConnections(forDeviceIDs: waiting.map(\.deviceID))
            } catch {
                logger.warning("cannot read which devices have pending remote actions; the next sweep tries again", metadata: [
                    "error": "\(Self.oneLine(error))",
                ])
                return 0
            }
        }
        guard !connections.isEmpty else { return 0 }
        do {
            let pending = try await storage.actions.pendingActions(for: Array(connections.keys), now: now())
            var sent: [Int64] = []
            for (key, records) in Dictionary(grouping: pending, by: \.device) {
                for connection in connections[key] ?? [] { sent += await connection.offerActions(records) }
            }
            try await storage.actions.markActionsSent(ids: sent, at: now())
            return sent.count
        } catch {
            logger.warning("cannot send devices their pending remote actions; the next report or sweep tries again", metadata: [
                "error": "\(Self.oneLine(error))",
            ])
            return 0
        }
    }

    /// Keeps a device's answer to an action sent on one of its connections here. A diagnostics
    /// report is kept only when it is a JSON object (and only for `diagnostics`); the rest of a
    /// hostile answer is bounded by the protocol and shown escaped.
    func actionAnswered(_ action: RemoteAction, _ result: RemoteActionResult, device: DeviceKey, name: String) async {
        var message = result.message
        var report: String? = nil
        if !result.report.isEmpty {
            if action.kind == .diagnostics, result.outcome == .done, Self.isJSONObject(result.report) {
                report = String(decoding: result.report, as: UTF8.self)
            } else {
                message += message.isEmpty ? "" : "; "
                message += "its report was not a JSON object and was not kept"
            }
        }
        let outcome = DeviceActionOutcome(id: action.id, state: DeviceActionState(result.outcome), message: message, report: report, at: now())
        let record = DeviceActionRecord(
            id: action.id, device: device, deviceName: name, kind: action.kind, partition: action.partition, requestedBy: "-",
            requestedAt: outcome.at, expiresAt: outcome.at)
        do {
            let kept = try await storage.actions.finishAction(outcome, key: device, audit: DeviceActionAudit.answered(record, outcome: outcome))
            logger.notice(kept ? "remote action answered" : "a device answered a remote action that is no longer pending", metadata: [
                "device": "\(name)", "device_id": "\(device.deviceID)", "action_id": "\(action.id)", "action": "\(action.kind)",
                "partition": "\(action.partition ?? "-")", "outcome": "\(result.outcome)",
            ])
        } catch {
            logger.error("cannot keep a device's answer to a remote action; it expires unanswered", metadata: [
                "device_id": "\(device.deviceID)", "action_id": "\(action.id)", "error": "\(Self.oneLine(error))",
            ])
        }
    }

    /// Keeps what a device's report says it accepts.
    func recordAcceptedActions(_ kinds: [RemoteActionKind], device: DeviceKey) async {
        do {
            try await storage.actions.recordAcceptedActions(device, kinds: kinds, at: now())
        } catch {
            logger.warning("cannot keep which remote actions a device accepts", metadata: [
                "device_id": "\(device.deviceID)", "error": "\(Self.oneLine(error))",
            ])
        }
    }

    /// How many devices with pending actions one delivery looks at (a selection is at most
    /// `max_devices_per_action`; the rest wait for the next sweep).
    static let pendingDevicesLimit = 100_000

    static func isJSONObject(_ bytes: [UInt8]) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) is [String: Any]
    }
}
