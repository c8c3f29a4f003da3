import Testing
import TetherProtocol
@testable import TetherServer

/// Tag edits as operators write them: `K=V` sets, `K=` removes, every key and value checked,
/// the device's tags bounded.
@Suite struct TagEditTests {
    @Test func setsAndRemovesApply() throws {
        let edit = try TagEdit.parse(["store=17", "region=", "lane=a.b-c_d"])
        #expect(edit.set == ["store": "17", "lane": "a.b-c_d"] && edit.remove == ["region"])
        #expect(try edit.applied(to: ["region": "north", "store": "3"]) == ["store": "17", "lane": "a.b-c_d"])
        #expect(TagEdit.describe(["store": "17", "lane": "a"]) == "lane=a,store=17" && TagEdit.describe([:]) == "-")
    }

    @Test(arguments: [
        ["store"], ["=17"], ["Store=1"], ["store=a b"], ["store=-1"], ["store=1", "store=2"], ["store=1", "store="],
        ["k\u{7}=1"], ["store=\u{1b}[31m"], [String(repeating: "k", count: 33) + "=1"], ["store=" + String(repeating: "v", count: 65)],
    ])
    func badItemsAreRefused(_ items: [String]) {
        #expect(throws: TagProblem.self) { try TagEdit.parse(items) }
    }

    @Test func aDeviceHasAtMostSixteenTags() throws {
        let sixteen = Dictionary(uniqueKeysWithValues: (0..<16).map { ("k\($0)", "v") })
        #expect(try TagEdit(set: ["k0": "w"]).applied(to: sixteen).count == 16)
        #expect(throws: TagProblem.self) { try TagEdit(set: ["extra": "v"]).applied(to: sixteen) }
        #expect(try TagEdit(set: ["extra": "v"], remove: ["k1"]).applied(to: sixteen).count == 16)
        #expect(throws: TagProblem.self) { try TagEdit(set: sixteen.merging(["extra": "v"]) { a, _ in a }).validated() }
    }
}
