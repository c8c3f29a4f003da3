import Testing

/// The contested-row model must allow exactly what some server order of the agents' changes
/// produces by the server-order rules — a lost or misapplied change is a violation.
struct ContestedRowsModelTests {
    typealias Row = CampaignModel.Row
    typealias Step = CampaignModel.ContestedStep

    static let base = Row(customer: "c1", total: 1, note: "n1")

    func row(total: Int, note: String? = "n1", customer: String = "c1") -> Row { Row(customer: customer, total: total, note: note) }

    /// A model whose partition `p` holds `base` as `s-1`, after `steps` by each agent.
    func model(_ steps: [(agent: String, before: Row?, after: Row?)], base: Row? = ContestedRowsModelTests.base) -> CampaignModel {
        var model = CampaignModel(partitions: ["p"])
        model.settle("p", to: base.map { ["s-1": $0] } ?? [:])
        for step in steps { model.acceptContested([Step(id: "s-1", before: step.before, after: step.after)], by: step.agent, in: "p") }
        return model
    }

    func violations(_ model: CampaignModel, _ actual: Row?, discarded: Set<String> = []) -> Int {
        model.check("p", actual: actual.map { ["s-1": $0] } ?? [:], discardedOwners: discarded).violations.count
    }

    @Test func concurrentUpdatesOfOneFieldEndWithOneAgentsLastValue() {
        let model = model([
            ("a0", Self.base, row(total: 2)), ("a0", row(total: 2), row(total: 3)), ("a1", Self.base, row(total: 9)),
        ])
        #expect(violations(model, row(total: 3)) == 0)
        #expect(violations(model, row(total: 9)) == 0)
        #expect(violations(model, row(total: 2)) == 1, "a0's later write of the field cannot lose to its earlier one")
        #expect(violations(model, Self.base) == 1, "someone's write was lost")
    }

    @Test func updatesOfDifferentFieldsBothSurvive() {
        let model = model([("a0", Self.base, row(total: 5)), ("a1", Self.base, row(total: 1, note: "x"))])
        #expect(violations(model, row(total: 5, note: "x")) == 0)
        #expect(violations(model, row(total: 5)) == 1, "a1's note is lost")
    }

    @Test func anUpdateNeverBringsBackADeletedRow() {
        let model = model([("a0", Self.base, nil), ("a1", Self.base, row(total: 1, note: "x"))])
        #expect(violations(model, nil) == 0)
        #expect(violations(model, row(total: 1, note: "x")) == 1, "a delete wins over a concurrent update")
    }

    @Test func anInsertAfterADeleteCreatesTheRowWithEveryField() {
        let inserted = row(total: 7, note: nil, customer: "c7")
        let model = model([("a0", Self.base, nil), ("a1", nil, inserted)], base: Self.base)
        #expect(violations(model, inserted) == 0)
        #expect(violations(model, nil) == 0)
        #expect(violations(model, row(total: 7, note: "n1", customer: "c7")) == 1, "an insert sets every field")
    }

    @Test func onlyAnAgentWhoseResetDiscardedMayMissItsChanges() {
        let model = model([("a0", Self.base, row(total: 2)), ("a1", Self.base, row(total: 1, note: "x"))])
        #expect(violations(model, row(total: 1, note: "x")) == 1)
        #expect(violations(model, row(total: 1, note: "x"), discarded: ["a0"]) == 0)
        #expect(violations(model, row(total: 2), discarded: ["a0"]) == 1, "a1 did not discard")
    }

    @Test func aStatementThatChangesNothingCapturesNothing() {
        #expect(ContestedChange(before: nil, after: nil) == nil)
        #expect(ContestedChange(before: Self.base, after: Self.base) == nil)
        #expect(ContestedChange(before: Self.base, after: row(total: 4)) == .update(customer: nil, total: 4, note: nil))
        #expect(ContestedChange(before: Self.base, after: row(total: 1, note: nil)) == .update(customer: nil, total: nil, note: .some(nil)))
    }

    @Test func theScriptsOutputGivesEachStatementsRowsBeforeAndAfter() {
        let operations: [CampaignModel.Operation] = [.setTotal(id: "s-1", 4), .delete(id: "s-2")]
        #expect(CampaignModel.Operation.contestedScript(operations).hasPrefix("BEGIN IMMEDIATE;"))
        let steps = CampaignModel.Operation.contestedSteps(operations, output: "b|0|s-1|c1|1.0|n1\na|0|s-1|c1|4.0|n1\n")
        #expect(steps.map(\.id) == ["s-1", "s-2"])
        #expect(steps[0].before == Self.base && steps[0].after == row(total: 4))
        #expect(steps[1].before == nil && steps[1].after == nil)
    }

    @Test func tooManyInterleavingsAreLeftToTheFieldPossibilities() {
        let long = Array(repeating: ContestedChange.delete, count: 100)
        #expect(ServerOrderReplay.outcomes(base: Self.base, sequences: [long, long, long], limit: 1000) == nil)
        #expect(ServerOrderReplay.outcomes(base: Self.base, sequences: [[], []]) == [Self.base])
    }
}
