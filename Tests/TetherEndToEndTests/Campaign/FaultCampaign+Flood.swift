import Foundation
import Synchronization
import TetherTestSupport

/// `flood` (issue 46): while it lasts, slow and oversized unauthenticated clients
/// (``LoopbackFlood``: slow heads and bodies, oversized heads, upgrades that never bind, 60 KB
/// console sign-ins, partial frames) on every route of one server instance — or, with several
/// instances, sometimes of all — on its devices' listener and its admin one, from several source
/// addresses. The agents (through their proxies, from 127.0.0.1) and the campaign's admin
/// commands must go on as if nothing happened: nothing may be lost or stall. Bounded for a
/// 2-core machine: ``floodConnections`` at once, each reopened a second after the server
/// closes it (50 a second at most), ``floodConnections`` × 10 in all.
extension FaultCampaign {
    /// Other peers than the agents' proxies and the admin commands (127.0.0.1).
    static let floodAddresses = (2...5).map { "127.0.0.\($0)" }
    static let floodConnections = 240

    func startFlood(instances up: [Int]) throws -> Injection {
        guard !up.isEmpty, shared.withLock({ $0.flood == nil }) else { return .skipped }
        let targets = shared.withLock { state in
            up.count > 1 && state.faultRandom.chance(0.5) ? up : [up.randomElement(using: &state.faultRandom) ?? up[0]]
        }
        var ports: [UInt16] = []
        for instance in targets {
            ports.append(cluster.ports[instance])
            if let admin = URLComponents(string: cluster.adminURL(instance: instance))?.port, !ports.contains(UInt16(admin)) {
                ports.append(UInt16(admin))
            }
        }
        let flood = try LoopbackFlood(LoopbackFlood.Plan(
            connections: Self.floodConnections, ports: ports, sourceAddresses: Self.floodAddresses,
            maxOpens: Self.floodConnections * 10, reopensPerSecond: 50, lasting: .seconds(300)))
        shared.withLock { $0.flood = flood }
        event("flooding \(targets.map(serverName).joined(separator: " and ")) on ports \(ports.map(String.init).joined(separator: ", "))")
        return .lasting(.stopFlood)
    }

    /// Stops the flood in effect, if any, once its connections are closed.
    func stopFlood() async {
        let flood = shared.withLock { state in
            defer { state.flood = nil }
            return state.flood
        }
        guard let flood else { return }
        await flood.stop()
        let counts = flood.counts
        stats.withLock {
            $0.floodConnections += counts.opened
            $0.floodClosedByServer += counts.closedByServer
        }
        event("flood stopped: \(counts)")
    }
}
