import Testing
import TetherSystemd

@Test(arguments: [
    ("tether.partition", "TETHER_PARTITION"),
    ("tether.reset_id", "TETHER_RESET_ID"),
    ("tether.error-code", "TETHER_ERROR_CODE"),
    ("message_id", "MESSAGE_ID"),
    ("_private", "PRIVATE"),
    ("__9lives", "LIVES"),
    ("42answer", "ANSWER"),
    ("über", "BER"),
    ("tether.größe", "TETHER_GR__E"),
])
func metadataKeysBecomeJournalFieldNames(_ key: String, _ field: String) {
    #expect(JournalFieldName.sanitize(key) == field)
}

@Test func fieldNamesAreCutTo64Characters() throws {
    let name = try #require(JournalFieldName.sanitize("tether." + String(repeating: "x", count: 100)))
    #expect(name.count == 64)
    #expect(name.hasPrefix("TETHER_XXX"))
}

@Test(arguments: ["", "_", "123", "_1_"])
func keysWithNothingUsableAreDropped(_ key: String) {
    #expect(JournalFieldName.sanitize(key) == nil)
}
