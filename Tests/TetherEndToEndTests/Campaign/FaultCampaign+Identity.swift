import Foundation
import Synchronization
import TetherControl
import TetherTestSupport

/// The campaign's identity faults (issue 48; docs/server.md "Rotation"): the agents are
/// enrolled devices, and a fault rotates one's credential or revokes one until it enrolls again.
/// Neither may lose a change: a rotation completes whatever it meets (kills, cuts, freezes), and
/// a revoked device keeps what it writes and uploads it once it is readmitted.
extension FaultCampaign {
    /// `rotate`: `admin device rotate` of any agent (up or down: a device that is not connected
    /// gets the credential at its next bind). `revoke-device`: `admin device revoke` of a running
    /// agent, lasting until ``readmit(_:admin:)``.
    func injectIdentity(_ fault: Fault, agentIndex: Int?, anyAgent: Int, admin: Int) async throws -> Injection {
        switch fault {
        case .rotate:
            let name = agents[anyAgent].name
            guard !shared.withLock({ $0.revokedDevices.contains(name) }) else { return .skipped }
            try await cluster.admin(["device", "rotate", name], instance: admin)
            return .instant
        default:
            guard let index = agentIndex else { return .skipped }
            let name = agents[index].name
            guard shared.withLock({ $0.revokedDevices.insert(name).inserted }) else { return .skipped }
            try await cluster.admin(["device", "revoke", name], instance: admin)
            return .lasting(.readmit(index))
        }
    }

    /// Readmits a revoked agent as an operator would: `admin device remove`, its token file
    /// deleted, the agent restarted (it enrolls again with its key: the same device id, a new
    /// credential). False while the agent is down (killed or frozen): tried again later.
    func readmit(_ index: Int, admin: Int) async throws -> Bool {
        let agent = agents[index]
        if shared.withLock({ !$0.removedDevices.contains(agent.name) }) {
            try await cluster.admin(["device", "remove", agent.name], instance: admin)
            if FileManager.default.fileExists(atPath: agent.dir + "/token") { try FileManager.default.removeItem(atPath: agent.dir + "/token") }
            shared.withLock { _ = $0.removedDevices.insert(agent.name) }
        }
        guard !isDown(agent.name) else { return false }
        await agent.stop(SIGTERM)
        do {
            try await agent.start()
        } catch where index == agents.count - 1 && smallDisk?.isFull == true {
            return false  // a daemon cannot start on a full disk: started again once there is room
        }
        shared.withLock { state in
            state.revokedDevices.remove(agent.name)
            state.removedDevices.remove(agent.name)
            state.remoteActions = state.remoteActions.filter { $0.value.device != agent.name }
        }
        return true
    }

    /// Once every agent is synced, no rotation may be left pending: each agent is connected and
    /// bound, so each was handed its credential and acknowledged it (or bound with it) — within
    /// 30 s, else a finding names the device.
    func checkRotations() async throws {
        var pending: [String] = []
        let deadline = clock.now.advanced(by: .seconds(30))
        repeat {
            let text = try await cluster.admin(["devices", "--json"], instance: upInstances.first ?? 0)
            let identities = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))["identities"]?.arrayValue ?? []
            pending = identities.filter { $0["source"]?.stringValue == "enrolled" && $0["rotation_pending"] == .bool(true) }
                .compactMap { $0["name"]?.stringValue }
            if pending.isEmpty { return }
            try await Task.sleep(for: .milliseconds(500))
        } while clock.now < deadline
        for name in pending { finding("device \(name): its credential rotation is still pending 30 s after convergence") }
    }
}
