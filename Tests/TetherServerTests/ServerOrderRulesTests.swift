import Testing
import TetherProtocol
import TetherServer

@Suite struct ServerOrderRulesTests {
    @Test func insertUpsertsAndMerges() {
        #expect(ServerOrderRules.apply(.insert("t", .integer(1), ["a": .integer(1)]), to: nil) == .put(["a": .integer(1)]))
        #expect(ServerOrderRules.apply(.insert("t", .integer(1), ["a": .integer(2)]), to: ["a": .integer(1), "b": .null])
            == .put(["a": .integer(2), "b": .null]))
    }

    @Test func updateOfAMissingRowIsIgnored() {
        #expect(ServerOrderRules.apply(.update("t", .integer(1), ["a": .integer(2)]), to: nil) == .unchanged)
        #expect(ServerOrderRules.apply(.update("t", .integer(1), ["a": .integer(2)]), to: ["a": .integer(1), "b": .text("x")])
            == .put(["a": .integer(2), "b": .text("x")]))
    }

    @Test func deleteRemovesWhenPresent() {
        #expect(ServerOrderRules.apply(.delete("t", .integer(1)), to: nil) == .unchanged)
        #expect(ServerOrderRules.apply(.delete("t", .integer(1)), to: [:]) == .delete)
    }
}
