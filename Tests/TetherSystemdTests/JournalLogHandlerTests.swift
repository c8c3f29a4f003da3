import Foundation
import Logging
import Testing
import TetherSystemd
import TetherTestSupport

/// Logs through the journald handler into a real systemd-journald and reads the records back
/// with `journalctl -o json`.
@Suite(.enabled(if: Journald.isAvailable, "needs a running journald, or root to start /lib/systemd/systemd-journald"))
struct JournalLogHandlerTests {
    @Test func everyLevelReachesJournaldWithItsFields() async throws {
        try await Journald.ensureRunning()
        let identifier = "tether-test-\(UUID().uuidString.prefix(8).lowercased())"
        var logger = Logger(label: "tether.test") {
            JournalLogHandler(label: $0, identifier: identifier, levelBox: LogLevelBox(.trace))
        }
        logger[metadataKey: "tether.partition"] = "store-17"

        var lines: [TetherLogLevel: UInt] = [:]
        for level in TetherLogLevel.allCases {
            lines[level] = #line; logger.log(level: level.loggerLevel, "record at \(level)\nsecond line", metadata: ["tether.level_name": "\(level)"])
        }
        let special = #line; logger.error(
            "reset started", metadata: ["message_id": "3c7d1b4e9f0a4d2b8e6f5a1c2b3d4e5f", "tether.error_code": "211",
                                        "tether.hook": ["name": "before-reset"]])

        let records = try await eventually("8 records for \(identifier)", timeout: TestDeadline.standard) {
            let found = try await Journald.records(identifier: identifier)
            return found.count >= 8 ? found : nil
        }
        #expect(records.count == 8)
        for level in TetherLogLevel.allCases {
            let record = try #require(records.first { $0["TETHER_LEVEL_NAME"] == level.rawValue }, "no \(level) record")
            #expect(record["MESSAGE"] == "record at \(level)\nsecond line")
            #expect(record["PRIORITY"] == String(level.priority))
            #expect(record["SYSLOG_IDENTIFIER"] == identifier)
            #expect(record["CODE_FILE"] == "TetherSystemdTests/JournalLogHandlerTests.swift")
            #expect(record["CODE_LINE"] == lines[level].map { String($0) })
            #expect(record["CODE_FUNC"] == "everyLevelReachesJournaldWithItsFields()")
            #expect(record["TETHER_PARTITION"] == "store-17")
            #expect(record["TETHER_LEVEL"] == level.rawValue)
            #expect(record["TETHER_LOGGER"] == "tether.test")
            #expect(record["_TRANSPORT"] == "journal")
            #expect(record["_PID"] == String(getpid()))
        }
        let reset = try #require(records.first { $0["MESSAGE"] == "reset started" })
        #expect(reset["MESSAGE_ID"] == "3c7d1b4e9f0a4d2b8e6f5a1c2b3d4e5f")
        #expect(reset["TETHER_ERROR_CODE"] == "211")
        #expect(reset["TETHER_HOOK_NAME"] == "before-reset")
        #expect(reset["PRIORITY"] == "3")
        #expect(reset["CODE_LINE"] == String(special))

        let byField = try await Journald.records(matching: ["SYSLOG_IDENTIFIER=\(identifier)", "TETHER_ERROR_CODE=211"])
        #expect(byField.count == 1, "journalctl can filter on a Tether field")
    }

    @Test func recordsBelowTheBoxLevelAreNotSent() async throws {
        try await Journald.ensureRunning()
        let identifier = "tether-test-\(UUID().uuidString.prefix(8).lowercased())"
        let box = LogLevelBox(.warn)
        let logger = Logger(label: "tether.test") {
            JournalLogHandler(label: $0, identifier: identifier, levelBox: box)
        }
        logger.notice("info dropped")
        logger.warning("warn kept")
        box.level = .debug
        logger.debug("debug kept")
        logger.trace("trace dropped")
        let records = try await eventually("2 records", timeout: TestDeadline.standard) {
            let found = try await Journald.records(identifier: identifier)
            return found.count >= 2 ? found : nil
        }
        // A marker sent last: once it is there, anything logged before it would be too.
        logger.critical("marker")
        let all = try await eventually("marker", timeout: TestDeadline.standard) {
            let found = try await Journald.records(identifier: identifier)
            return found.contains { $0["MESSAGE"] == "marker" } ? found : nil
        }
        #expect(records.map { $0["MESSAGE"] } == ["warn kept", "debug kept"])
        #expect(all.map { $0["MESSAGE"] } == ["warn kept", "debug kept", "marker"])
    }
}
