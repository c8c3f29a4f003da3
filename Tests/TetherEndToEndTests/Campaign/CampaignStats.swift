import Foundation

/// What a campaign did and found, for its one-line summary and its assertions.
struct CampaignStats: Sendable {
    var seed: UInt64
    /// The server's storage: `sqlite` or `postgresql/<instances>`.
    var storage = "sqlite"
    var rounds = 0
    var accepted = 0
    var rejected = 0
    var faults: [String: Int] = [:]
    /// Connections the `flood` fault opened, and those of them the server closed.
    var floodConnections = 0
    var floodClosedByServer = 0
    /// Faults that could not be injected on this machine, with the reason.
    var unavailable: [String: String] = [:]
    var resets: [String: Int] = [:]
    /// Resets by their lineage cause (`store-regressed`, `store-cloned`).
    var causes: [String: Int] = [:]
    /// Partitions found stuck after the faults stopped and forced with `reset initiate`.
    var forced = 0
    /// Agents restarted because a connection attempt hung (a known open bug).
    var stuckConnecting = 0
    /// Resets the agent's loop guard made manual (reason `reset loop`).
    var loopsCut = 0
    /// Remote actions asked for, by kind and outcome (`retry-now done`).
    var remoteActions: [String: Int] = [:]
    var rowsChecked = 0
    /// Contested rows (written by several agents) changed in a round and checked against every server order.
    var contestedChecked = 0
    /// Of those, rows changed by more than one agent in the round (real same-row conflicts).
    var contestedBySeveral = 0
    var roundsByCertainty: [String: Int] = [:]
    /// Rows whose store value the model does not allow: changes lost (or invented).
    var violations: [CampaignModel.Violation] = []
    /// Anything else that must not happen: a crash, a missing backup, a failed integrity check.
    var findings: [String] = []

    /// The round that took longest to converge after its faults stopped: how long, and what it
    /// waited for last (the devices not yet synced, or stores that differed).
    var slowestConvergence: (round: Int, seconds: Double, waitedFor: String)?

    mutating func count(fault: String) { faults[fault, default: 0] += 1 }

    /// Notes a round's convergence time, keeping the slowest.
    mutating func converged(round: Int, after seconds: Double, waitedFor: String) {
        guard seconds > (slowestConvergence?.seconds ?? -1) else { return }
        slowestConvergence = (round, seconds, waitedFor)
    }

    /// The slowest round's convergence, for a line of its own beside the summary.
    var convergenceLine: String? {
        slowestConvergence.map {
            "fault campaign: slowest convergence: round \($0.round), \(String(format: "%.1f", $0.seconds)) s"
                + ($0.waitedFor.isEmpty ? " (synced at the first look)" : "; waited last for: \($0.waitedFor.prefix(600))")
        }
    }

    var summary: String {
        func list(_ counts: [String: Int]) -> String {
            counts.isEmpty ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        var line = "fault campaign seed=\(seed) storage=\(storage) rounds=\(rounds) writes accepted=\(accepted) refused=\(rejected)"
        line += " | faults: \(list(faults))"
        if floodConnections > 0 { line += " (flood: \(floodConnections) connections, \(floodClosedByServer) closed by the server)" }
        if !unavailable.isEmpty { line += " (unavailable: \(unavailable.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")))" }
        line += " | resets: \(list(resets)) forced=\(forced) loops-cut=\(loopsCut) stuck-connecting=\(stuckConnecting)"
        line += " | reset causes: \(list(causes))"
        if !remoteActions.isEmpty { line += " | remote actions: \(list(remoteActions))" }
        line += " | rounds checked: \(list(roundsByCertainty)) rows checked=\(rowsChecked) contested=\(contestedChecked) by-several=\(contestedBySeveral)"
        line += " | changes lost=\(violations.count) findings=\(findings.count)"
        return line
    }
}
