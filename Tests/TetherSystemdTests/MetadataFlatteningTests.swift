import Logging
import Testing
import TetherSystemd

@Test func nestedMetadataIsFlattenedAndSorted() {
    let metadata: Logger.Metadata = [
        "tether.partition": "store-17",
        "tether.hook": ["name": "before-reset", "exit": "3"],
        "tether.tables": ["orders", "lines"],
        "count": .stringConvertible(42),
    ]
    let pairs = MetadataFlattening.flatten(metadata)
    #expect(pairs.map(\.key) == ["count", "tether.hook.exit", "tether.hook.name", "tether.partition", "tether.tables"])
    #expect(pairs.map(\.value) == ["42", "3", "before-reset", "store-17", "[orders, lines]"])
}

@Test func dictionariesInsideArraysAreWrittenInline() {
    #expect(MetadataFlattening.text(.array([["b": "2", "a": "1"], "x"])) == "[[a: 1, b: 2], x]")
}
