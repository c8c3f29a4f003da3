import Logging
import Testing
import TetherSystemd

private func event(
    _ level: Logger.Level, _ message: Logger.Message, metadata: Logger.Metadata? = nil, error: (any Error)? = nil
) -> LogEvent {
    LogEvent(
        level: level, message: message, error: error, metadata: metadata, source: "Tests",
        file: "TetherAgent/Session.swift", function: "run()", line: 42)
}

@Test func entryCarriesStandardFieldsFirst() {
    let entry = JournalEntry(
        event: event(.warning, "two\nlines"), identifier: "tetherd", label: "tether.session", metadata: [:])
    #expect(entry.fields.map(\.name) == [
        "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC", "TETHER_LEVEL",
        "TETHER_LOGGER",
    ])
    #expect(entry["MESSAGE"] == "two\nlines")
    #expect(entry["PRIORITY"] == "4")
    #expect(entry["SYSLOG_IDENTIFIER"] == "tetherd")
    #expect(entry["CODE_FILE"] == "TetherAgent/Session.swift")
    #expect(entry["CODE_LINE"] == "42")
    #expect(entry["CODE_FUNC"] == "run()")
    #expect(entry["TETHER_LEVEL"] == "warn")
    #expect(entry["TETHER_LOGGER"] == "tether.session")
    #expect(entry.fields[0].bytes == Array("MESSAGE=two\nlines".utf8))
}

@Test func metadataBecomesUpperCaseFields() {
    let metadata: Logger.Metadata = [
        "tether.partition": "store-17", "tether.error_code": .stringConvertible(203),
        "tether.hook": ["name": "before-reset"],
    ]
    let entry = JournalEntry(event: event(.notice, "m"), identifier: "t", label: "l", metadata: metadata)
    #expect(entry["TETHER_PARTITION"] == "store-17")
    #expect(entry["TETHER_ERROR_CODE"] == "203")
    #expect(entry["TETHER_HOOK_NAME"] == "before-reset")
    #expect(entry["PRIORITY"] == "6")
}

@Test func messageIDIsNormalisedFromUUIDForm() {
    let entry = JournalEntry(
        event: event(.error, "m"), identifier: "t", label: "l",
        metadata: ["message_id": "8D45620C-1A43-4E1B-9A4D-3F5C2B7E9E01"])
    #expect(entry["MESSAGE_ID"] == "8d45620c1a434e1b9a4d3f5c2b7e9e01")
    #expect(JournalEntry.normalizedMessageID("not-an-id") == "not-an-id")
}

@Test func metadataCannotReplaceHandlerFields() {
    let entry = JournalEntry(
        event: event(.error, "real"), identifier: "t", label: "l", metadata: ["message": "fake", "priority": "0"])
    #expect(entry.fields.filter { $0.name == "MESSAGE" }.count == 1)
    #expect(entry["MESSAGE"] == "real")
    #expect(entry["META_MESSAGE"] == "fake")
    #expect(entry["META_PRIORITY"] == "0")
}

@Test func anAttachedErrorIsAField() {
    struct Broken: Error, CustomStringConvertible { var description: String { "disk full" } }
    let entry = JournalEntry(event: event(.error, "m", error: Broken()), identifier: "t", label: "l", metadata: [:])
    #expect(entry["ERROR"] == "disk full")
}
