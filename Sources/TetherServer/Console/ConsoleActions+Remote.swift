import Foundation
import HTTPTypes
import TetherProtocol

/// Remote actions from the console (docs/server.md, "Remote actions"): one device's (its page)
/// or every device of a filtered list's (a selection: "initiate the pending reset on every
/// device in state reset-pending of partition store-*"). The confirmation says what will be
/// asked of how many devices (the count the server reads for the selection) before anything is
/// queued; the request is made as `console`, all or none.
extension ConsoleActions {
    static let remoteAction = "remote-action"

    /// What the console offers, in words.
    static func remoteLabel(_ kind: RemoteActionKind) -> String {
        switch kind {
        case .initiateReset: "initiate the pending reset"
        case .retryNow: "retry now (end the backoff)"
        case .pause: "pause the partition"
        case .resume: "resume the partition"
        case .diagnostics: "send a diagnostics report"
        default: kind.rawValue
        }
    }

    /// The selection a form names (`select-partition`, `state`, `stale`, `text`), or nil for one device.
    static func selection(_ form: ConsoleActionForm) -> AdminAPI.Selection? {
        func field(_ f: ConsoleActionForm.Field) -> String? { form[f].flatMap { $0.isEmpty ? nil : $0 } }
        guard form[.device] == nil else { return nil }
        return AdminAPI.Selection(partition: field(.selectPartition), state: field(.state), stale: field(.stale), text: field(.text))
    }

    /// What the request will do, with the number of devices a selection takes; nil without a
    /// known kind or a device or selection.
    func describeRemote(_ form: ConsoleActionForm) async throws -> String? {
        guard let kindText = form[.kind] else { return nil }
        let kind = RemoteActionKind(rawValue: kindText)
        guard kind.isKnown else { return nil }
        let partition = form[.partition].flatMap { $0.isEmpty ? nil : $0 }
        let label = Self.remoteLabel(kind)
        if let device = form[.device], !device.isEmpty {
            if kind.needsPartition && partition == nil { throw AdminError(.badRequest, "“\(label)” needs a partition", hint: "choose one of the device's partitions") }
            return "Ask device \(device) to \(label)\(partition.map { " of partition \($0)" } ?? ""). It runs under the device's own rules (`[device] remote_actions`) and expires if the device does not take it in time."
        }
        guard let selection = Self.selection(form) else { return nil }
        let count = try await control.countSelection(selection)
        let which = selection.summary.isEmpty ? "every device" : "every device with \(selection.summary)"
        return "Ask \(which) — \(count) device partition\(count == 1 ? "" : "s") now — to \(label)\(partition.map { " of partition \($0)" } ?? (kind.needsPartition ? " (each of its own partition)" : "")). All are queued or none."
    }

    func performRemote(_ form: ConsoleActionForm) async throws -> String {
        let kind = RemoteActionKind(rawValue: form[.kind] ?? "")
        let partition = form[.partition].flatMap { $0.isEmpty ? nil : $0 }
        let target: RemoteActionTarget
        if let device = form[.device], !device.isEmpty {
            target = .device(device)
        } else if let selection = Self.selection(form) {
            target = .selection(selection)
        } else {
            throw AdminError(.badRequest, "no device or selection")
        }
        let request = try await control.requestActions(kind, partition: partition, target: target, actor: Self.actor)
        return "Asked \(request.devices) device\(request.devices == 1 ? "" : "s") to \(Self.remoteLabel(kind)): \(request.queued) action\(request.queued == 1 ? "" : "s") queued, \(request.sentNow) sent now; the rest go when the devices connect. Each device's page shows the outcome."
    }

    /// Back to the device's page, or to the list the selection came from.
    static func remoteBack(_ form: ConsoleActionForm) -> String {
        if let id = form[.deviceID], !id.isEmpty { return "/console/devices/\(H.segment(id))" }
        func field(_ f: ConsoleActionForm.Field) -> String? { form[f].flatMap { $0.isEmpty ? nil : $0 } }
        let query = ConsoleDeviceQuery(partition: field(.selectPartition), state: field(.state), stale: field(.stale), text: field(.text))
        return "/console/devices" + query.queryString
    }
}
