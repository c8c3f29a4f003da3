import Logging
import Testing
import TetherSystemd

@Test func sevenLevelsInSeverityOrderWithSpecNames() {
    #expect(TetherLogLevel.allCases.map(\.rawValue) == ["fatal", "error", "warn", "info", "detail", "debug", "trace"])
    #expect(TetherLogLevel.fatal < .trace)
}

@Test func prioritiesFollowSpec() {
    #expect(TetherLogLevel.allCases.map(\.priority) == [2, 3, 4, 6, 6, 7, 7])
}

@Test func swiftLogMappingIsOneToOne() {
    let expected: [TetherLogLevel: Logger.Level] = [
        .fatal: .critical, .error: .error, .warn: .warning, .info: .notice, .detail: .info, .debug: .debug,
        .trace: .trace,
    ]
    for level in TetherLogLevel.allCases {
        #expect(level.loggerLevel == expected[level])
        #expect(TetherLogLevel(loggerLevel: level.loggerLevel) == level)
    }
    #expect(Set(TetherLogLevel.allCases.map(\.loggerLevel)).count == Logger.Level.allCases.count)
}

@Test(arguments: [("info", TetherLogLevel.info), (" DETAIL\n", .detail), ("Warn", .warn), ("trace", .trace)])
func parsesLevelNames(_ text: String, _ level: TetherLogLevel) throws {
    #expect(try TetherLogLevel(parsing: text) == level)
}

@Test(arguments: ["warning", "notice", "", "critical"])
func rejectsOtherNamesListingValidOnes(_ text: String) {
    #expect(throws: TetherLogLevelError(text: text)) { try TetherLogLevel(parsing: text) }
    let message = TetherLogLevelError(text: text).description
    #expect(message.contains("'\(text)'"))
    #expect(message.contains("fatal error warn info detail debug trace"))
}
