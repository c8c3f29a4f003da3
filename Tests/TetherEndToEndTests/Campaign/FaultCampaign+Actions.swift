import Foundation
import Synchronization
import TetherControl
import TetherTestSupport

/// The campaign's remote actions (issue 49; docs/server.md "Remote actions"): an operator asks
/// one device, or every device, to `retry-now`, send `diagnostics` or `pause` while the faults
/// run. None may lose a change, and each must end once the devices are back: after convergence
/// every action is answered — `pause` refused (the agents keep the default `[device]
/// remote_actions`, which leaves it out), `diagnostics` done with its report.
extension FaultCampaign {
    /// `remote-action`: one device's action, or one for every device of the ledger (a
    /// selection), by `admin` on any running instance. Instant: the action waits for a device
    /// that is down, cut or frozen.
    func injectRemoteAction(anyAgent: Int, admin: Int) async throws -> Injection {
        let (kind, everyDevice) = shared.withLock { state in
            (["retry-now", "diagnostics", "pause"].randomElement(using: &state.faultRandom)!, state.faultRandom.chance(0.25))
        }
        let name = agents[anyAgent].name
        guard !shared.withLock({ $0.revokedDevices.contains(name) }) else { return .skipped }
        let arguments = everyDevice && kind != "pause"
            ? ["action", "request", kind, "--yes", "--json"]
            : ["device", "action", name, kind, "--json"] + (kind == "pause" ? ["--partition", settings.partitions[0]] : [])
        let text = try await cluster.admin(arguments, instance: admin)
        let actions = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))["actions"]?.arrayValue ?? []
        shared.withLock { state in
            for action in actions {
                guard let id = action["id"]?.numberValue.map(Int64.init), let device = action["device_name"]?.stringValue else { continue }
                state.remoteActions[id] = (device, kind)
            }
        }
        event("remote action \(kind) for \(everyDevice && kind != "pause" ? "every device" : name): \(actions.count) queued")
        return .instant
    }

    /// Once every agent is synced and connected, each action asked for is answered within 60 s
    /// with the outcome its kind must have; else a finding names it. A device removed and
    /// enrolled again (`revoke-device`) is a new device for its old actions: they are not checked.
    func checkRemoteActions() async throws {
        // A selection of every device takes the ledger's, stopped clones included: their actions
        // rightly wait (until they expire) for a device that no longer runs.
        let running = Set(agents.map(\.name))
        let asked = shared.withLock { state in
            defer { state.remoteActions = [:] }
            return state.remoteActions.filter { running.contains($0.value.device) }
        }
        guard !asked.isEmpty else { return }
        let deadline = clock.now.advanced(by: .seconds(60))
        var waiting = asked
        var ended: [Int64: JSONValue] = [:]
        repeat {
            for id in waiting.keys.sorted() {
                let text = try await cluster.admin(["action", "show", "\(id)", "--json"], instance: upInstances.first ?? 0)
                let action = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
                if let state = action["state"]?.stringValue, state != "queued" && state != "sent" {
                    ended[id] = action
                    waiting[id] = nil
                }
            }
            if waiting.isEmpty { break }
            try await Task.sleep(for: .milliseconds(500))
        } while clock.now < deadline
        for (id, (device, kind)) in waiting.sorted(by: { $0.key < $1.key }) {
            finding("remote action \(id) (\(kind) for \(device)) still unanswered 60 s after convergence")
        }
        for (id, action) in ended.sorted(by: { $0.key < $1.key }) {
            let (device, kind) = asked[id]!
            let state = action["state"]?.stringValue ?? "?"
            stats.withLock { $0.remoteActions["\(kind) \(state)", default: 0] += 1 }
            switch (kind, state) {
            case ("pause", "refused"), ("retry-now", "done"):
                break
            case ("diagnostics", "done"):
                if action["has_diagnostics"] != .bool(true) { finding("remote action \(id) (diagnostics for \(device)) done without a report") }
            default:
                finding("remote action \(id) (\(kind) for \(device)) ended \(state): \(action["message"]?.stringValue ?? "-")")
            }
        }
    }
}
