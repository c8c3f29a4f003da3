import Foundation
import Testing
import TetherClient

/// ``Tether``'s enums: the wire strings of docs/contract.md and docs/events.md both ways, and a
/// name a newer agent adds decodes as `other`, never as an error.
@Suite struct TetherNamesTests {
    @Test func everyKnownNameRoundTrips() throws {
        func check<Name: ReportedName>(_ type: Name.Type) throws {
            #expect(Set(Name.known.map(\.rawValue)).count == Name.known.count, "\(type): no name twice")
            for name in Name.known {
                #expect(Name(rawValue: name.rawValue) == name && name.isKnown)
                let data = try JSONEncoder().encode([name])
                #expect(String(decoding: data, as: UTF8.self) == "[\"\(name.rawValue)\"]")
                #expect(try JSONDecoder().decode([Name].self, from: data) == [name])
            }
        }
        try check(Tether.PartitionState.self)
        try check(Tether.ErrorAction.self)
        try check(Tether.ResetStrategy.self)
        try check(Tether.ResetPhase.self)
        try check(Tether.ResetOutcome.self)
        #expect(Tether.PartitionState.resetPending.rawValue == "reset-pending")
        #expect(Tether.ErrorAction.clientResetNoRecovery.rawValue == "client_reset_no_recovery")
        #expect(Tether.ResetStrategy.deleteStore.rawValue == "delete-store")
        #expect(Tether.ResetPhase.backingUp.rawValue == "backing-up")
        #expect(Tether.ResetOutcome.manualDone.rawValue == "manual-done")
    }

    @Test func aNameANewerAgentAddedDecodesAsOther() throws {
        let phase = try JSONDecoder().decode(Tether.ResetPhase.self, from: Data(#""warming-up""#.utf8))
        #expect(phase == .other("warming-up") && !phase.isKnown && phase.description == "warming-up")
        #expect(Tether.PartitionState(rawValue: "hibernating") == .other("hibernating"))
        let report = PartitionReport(name: "p", state: "hibernating", serverVersion: 1, unsyncedChanges: 0)
        #expect(report.partitionState == .other("hibernating"))
    }

    @Test func anEventSaysItsNamesOnlyForItsKind() {
        let phase = AgentEvent(.resetPhase, partition: "p", message: "manual, because the before-reset hook failed", resetID: "r", phase: "manual-pending")
        #expect(phase.resetPhase == .manualPending && phase.resetStrategy == .manual && phase.resetOutcome == nil)
        let download = AgentEvent(.download, partition: "p", phase: "started")
        #expect(download.resetPhase == nil, "a download's phase is not a reset's")
        #expect(AgentEvent(.state, partition: "p", state: "reset-pending").partitionState == .resetPending)
        #expect(AgentEvent(.syncError, partition: "", action: "transient").errorAction == .transient)
        #expect(AgentEvent(.resetOutcome, partition: "p", outcome: "deleted").resetOutcome == .deleted)
    }
}
