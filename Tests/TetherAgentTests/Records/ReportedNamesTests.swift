import Testing
import TetherAgent
import TetherControl
import TetherProtocol

/// The names the agent reports (its package enums) are the public ones applications switch over
/// (``Tether`` in TetherControl), in the same order, each known there: a state, action,
/// strategy, phase or outcome added to the agent without its public case fails here.
@Suite struct ReportedNamesTests {
    @Test func theAgentsNamesAreThePublicOnes() {
        #expect(PartitionState.allCases.map(\.rawValue) == Tether.PartitionState.known.map(\.rawValue))
        #expect(ResetPhase.allCases.map(\.rawValue) == Tether.ResetPhase.known.map(\.rawValue))
        #expect(ResetOutcome.allCases.map(\.rawValue) == Tether.ResetOutcome.known.map(\.rawValue))
        let strategies: [ResetStrategy] = [.recover, .discard, .manual, .deleteStore]
        #expect(strategies.map(\.rawValue) == Tether.ResetStrategy.known.map(\.rawValue))
        for strategy in strategies { #expect(ResetStrategy(rawValue: strategy.rawValue) != nil) }
        // The server's actions, and `transient`, the agent's own for a transport failure.
        #expect(Set(ErrorAction.allCases.map(\.rawValue) + ["transient"]) == Set(Tether.ErrorAction.known.map(\.rawValue)))
    }

    @Test func aPhaseHasItsBackupFromTheStepAfterBackingUp() {
        let order = ResetPhase.allCases.map { Tether.ResetPhase(rawValue: $0.rawValue) }
        let after = order.drop { $0 != .backingUp }.dropFirst().filter { $0 != .quarantining }
        #expect(order.filter(\.backupExists) == Array(after))
    }
}
