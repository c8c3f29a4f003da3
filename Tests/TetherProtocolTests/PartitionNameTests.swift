import Testing
import TetherProtocol

@Test(arguments: ["a", "store-17", "catalog.eu_1", "A" + String(repeating: "x", count: 127)])
func legalPartitionNames(_ name: String) {
    #expect(PartitionName(name)?.rawValue == name)
}

@Test(arguments: ["", "-a", ".a", "_a", "a/b", "a b", "é", "A" + String(repeating: "x", count: 128), "a\u{0}"])
func illegalPartitionNames(_ name: String) {
    #expect(PartitionName(name) == nil)
}
