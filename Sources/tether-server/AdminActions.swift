import ArgumentParser
import Foundation
import TetherProtocol
import TetherServer

/// `tether-server admin device action NAME ACTION [--partition P]` (docs/server.md "Remote actions").
struct AdminDeviceAction: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "action",
        abstract: "Ask one device to initiate-reset, retry-now, pause, resume or send diagnostics; it runs when the device is connected.",
        discussion: """
            The action is queued (for an offline device until [devices] action_expire_after_seconds), \
            sent over the device's sync connection, run under the device's own rules ([device] \
            remote_actions) and answered: `admin device actions NAME` shows the outcome.
            """)
    @ParentCommand var device: AdminDevice
    @Argument(help: "The device's id or name.") var name: String
    @Argument(help: "initiate-reset, retry-now, pause, resume or diagnostics.", completion: .list(RemoteActionKind.all.map(\.rawValue)))
    var action: String
    @Option(name: .long, help: "The partition (initiate-reset, pause and resume need one).") var partition: String?

    func validate() throws {
        let kind = RemoteActionKind(rawValue: action)
        guard kind.isKnown else { throw ValidationError("\(action.debugDescription) is not one of \(RemoteActionKind.all.map(\.rawValue).joined(separator: " "))") }
        if kind.needsPartition && partition == nil { throw ValidationError("\(action) needs --partition") }
    }

    func run() async throws {
        let order = AdminAPI.ActionOrder(action: action, partition: partition, device: name)
        try await device.admin.perform({ try await $0.requestActions(order) }) { AdminActionRequest.describe($0) }
    }
}

/// `tether-server admin device actions NAME`: a device's actions and their outcomes.
struct AdminDeviceActions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "actions", abstract: "A device's remote actions, newest first, with their outcomes, and which it accepts.")
    @ParentCommand var device: AdminDevice
    @Argument(help: "The device's id or name.") var name: String

    func run() async throws {
        try await device.admin.perform({ try await $0.deviceActions(name) }) { list in
            let accepts = list.accepts.map { $0.isEmpty ? "none" : $0.joined(separator: " ") } ?? "unknown (the agent predates remote actions, or has not reported)"
            var text = TerminalText.safe("device \(list.deviceID) accepts: \(accepts)")
            guard !list.actions.isEmpty else { return text + "\nno remote actions" }
            text += "\n" + AdminActionRequest.table(list.actions)
            return text
        }
    }
}

/// `tether-server admin action request|show`: actions for a selection of the ledger, and one
/// action with its diagnostics report.
struct AdminAction: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "action", abstract: "Remote actions for a selection of devices; one action with its diagnostics report.",
        subcommands: [AdminActionRequest.self, AdminActionShow.self])
    @ParentCommand var admin: AdminCommand
}

struct AdminActionRequest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request", abstract: "Ask every device a selection of the ledger takes; without --yes, only says how many it takes.",
        discussion: """
            The selection is the ledger's filter: --partition (a name or a glob such as store-*), \
            --state (a state, or unhealthy, wedged, erroring, stale), --stale, --match. For \
            initiate-reset, pause and resume, each matching entry's partition is acted on. At most \
            [devices] max_devices_per_action devices per request; all or none are queued.
            """)
    @ParentCommand var group: AdminAction
    @Argument(help: "initiate-reset, retry-now, pause, resume or diagnostics.", completion: .list(RemoteActionKind.all.map(\.rawValue)))
    var action: String
    @Option(name: .long, help: "Only entries of this partition, or of those a glob matches (store-*).") var partition: String?
    @Option(name: .long, help: "Only entries in this state (or unhealthy, wedged, erroring, stale).") var state: String?
    @Option(name: .long, help: "Only devices not heard from for this long (90s, 30m, 24h, 7d).") var stale: String?
    @Option(name: .long, help: "Only devices whose name or id contains this.") var match: String?
    @Flag(name: .long, help: "Queue the actions (without it, only the count is shown).") var yes = false

    func validate() throws {
        guard RemoteActionKind(rawValue: action).isKnown else {
            throw ValidationError("\(action.debugDescription) is not one of \(RemoteActionKind.all.map(\.rawValue).joined(separator: " "))")
        }
        if let stale, DurationText.seconds(stale) == nil {
            throw ValidationError("--stale: \(stale.debugDescription) is not a duration such as 90s, 30m, 24h or 7d")
        }
    }

    func run() async throws {
        let selection = AdminAPI.Selection(partition: partition, state: state, stale: stale, text: match)
        if !yes {
            try await group.admin.perform({ try await $0.countSelection(selection) }) { count in
                TerminalText.safe("\(action) would go to \(count.devices) devices (\(selection.summary.isEmpty ? "every device" : selection.summary)); run again with --yes to ask them")
            }
            return
        }
        let order = AdminAPI.ActionOrder(action: action, selection: selection)
        try await group.admin.perform({ try await $0.requestActions(order) }) { Self.describe($0) }
    }

    static func describe(_ request: AdminAPI.ActionRequest) -> String {
        var text = "\(request.action): \(request.queued) actions queued for \(request.devices) devices, \(request.sentNow) sent at once"
        if !request.actions.isEmpty { text += "\n" + table(request.actions) }
        if request.queued > request.actions.count { text += "\n(\(request.queued - request.actions.count) more)" }
        return text
    }

    static func table(_ actions: [AdminAPI.DeviceAction]) -> String {
        AdminTable.render(
            ["ID", "DEVICE", "ACTION", "PARTITION", "BY", "ASKED", "STATE", "MESSAGE"],
            actions.map {
                ["\($0.id)", $0.deviceName, $0.action, $0.partition ?? "-", $0.requestedBy, $0.requestedAt, $0.state,
                 ($0.message ?? "") + ($0.hasDiagnostics ? " (diagnostics: admin action show \($0.id))" : "")]
            })
    }
}

struct AdminActionShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "One remote action: its outcome and its diagnostics report.")
    @ParentCommand var group: AdminAction
    @Argument(help: "The action's id.") var id: Int64

    func run() async throws {
        try await group.admin.perform({ try await $0.deviceAction(id: id) }) { action in
            var text = AdminActionRequest.table([action])
            if let report = action.diagnostics {
                // The device's words: pretty-printed when it parses, and made safe for a terminal.
                let pretty = (try? JSONSerialization.jsonObject(with: Data(report.utf8)))
                    .flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.prettyPrinted, .sortedKeys]) }
                    .map { String(decoding: $0, as: UTF8.self) } ?? report
                text += "\n\n" + pretty.split(separator: "\n", omittingEmptySubsequences: false).map { TerminalText.safe(String($0)) }.joined(separator: "\n")
            }
            return text
        }
    }
}
