import Testing

/// The campaign's model must catch a lost change and must allow exactly what a restore or a
/// discarding reset may legitimately undo — or the campaign proves nothing.
struct CampaignModelTests {
    typealias Row = CampaignModel.Row

    static let one = Row(customer: "c1", total: 1, note: nil)
    static let two = Row(customer: "c2", total: 2, note: "n2")

    func settled(_ rows: [String: Row]) -> CampaignModel {
        var model = CampaignModel(partitions: ["p"])
        model.settle("p", to: rows)
        return model
    }

    @Test func aLostUpdateInAnExactRoundIsAViolation() {
        var model = settled(["a0-1": Self.one])
        model.accept([.setTotal(id: "a0-1", 7), .upsert(id: "a0-2", Self.two)], in: "p", afterRestore: false)
        let expected = ["a0-1": Row(customer: "c1", total: 7, note: nil), "a0-2": Self.two]
        #expect(model.check("p", actual: expected, discardedOwners: []).violations.isEmpty)
        let lost = model.check("p", actual: ["a0-1": Self.one, "a0-2": Self.two], discardedOwners: [])
        #expect(lost.certainty == .exact)
        #expect(lost.violations.map(\.id) == ["a0-1"])
        #expect(model.check("p", actual: expected.merging(["a1-9": Self.one]) { $1 }, discardedOwners: []).violations.map(\.id) == ["a1-9"],
                "a row nobody wrote is a violation too")
    }

    @Test func aRestoreAllowsTheSnapshotsValuesButNotRowsInsertedAfterIt() {
        var model = settled(["a0-1": Self.one])
        model.recordSnapshot("p", id: "s1")
        model.accept([.setNote(id: "a0-1", "late"), .upsert(id: "a0-2", Self.two)], in: "p", afterRestore: false)
        model.restore("p", to: "s1")
        model.accept([.upsert(id: "a0-3", Self.two)], in: "p", afterRestore: true)
        // Accepted after the snapshot and lost by the restore: allowed.
        let reverted = model.check("p", actual: ["a0-1": Self.one, "a0-3": Self.two], discardedOwners: [])
        #expect(reverted.certainty == .restored)
        #expect(reverted.violations.isEmpty)
        // Inserted after the restore returned: recovered by rule 1, so it must be there.
        #expect(model.check("p", actual: ["a0-1": Self.one], discardedOwners: []).violations.map(\.id) == ["a0-3"])
        // A value no write and no snapshot ever had is not allowed.
        let invented = ["a0-1": Row(customer: "c1", total: 99, note: nil), "a0-3": Self.two]
        #expect(model.check("p", actual: invented, discardedOwners: []).violations.map(\.id) == ["a0-1"])
    }

    @Test func aDiscardingResetOnlyExcusesItsOwnAgentsRows() {
        var model = settled([:])
        model.accept([.upsert(id: "a0-1", Self.one)], in: "p", afterRestore: false)
        model.accept([.upsert(id: "a1-1", Self.two)], in: "p", afterRestore: false)
        let result = model.check("p", actual: [:], discardedOwners: ["a0"])
        #expect(result.certainty == .discarding)
        #expect(result.violations.map(\.id) == ["a1-1"], "a1's row was not discarded by a0's reset")
    }

    @Test func theWorkloadIsReproducibleFromItsSeed() {
        var first = CampaignWorkload(owner: "a0", seed: 42)
        var second = CampaignWorkload(owner: "a0", seed: 42)
        var rows: [String: Row] = [:]
        for _ in 0..<50 {
            let operations = first.nextTransaction(ownRows: rows)
            #expect(operations == second.nextTransaction(ownRows: rows))
            for case .upsert(let id, let row) in operations { rows[id] = row }
        }
        #expect(rows.keys.allSatisfy { $0.hasPrefix("a0-") })
    }
}
