import Logging
import Testing
import TetherSystemd

private let at = LogTimestamp(seconds: 1_795_364_400, nanoseconds: 123_456_789)

@Test func lineHasTimestampLevelMetadataAndMessage() {
    let line = StderrLineFormat.line(
        timestamp: at, level: .warn, metadata: ["tether.partition": "store-17", "tether.error_code": "203"],
        message: "bad user authentication")
    #expect(line == "2026-11-22T16:20:00.123Z warn  [tether.error_code=203 tether.partition=store-17] bad user authentication")
}

@Test func lineWithoutMetadataHasNoBrackets() {
    #expect(StderrLineFormat.line(timestamp: at, level: .detail, metadata: [:], message: "m")
        == "2026-11-22T16:20:00.123Z detail m")
    #expect(StderrLineFormat.line(timestamp: at, level: .info, metadata: [:], message: "m")
        == "2026-11-22T16:20:00.123Z info  m")
}

@Test func multiLineMessagesAndOddValuesStayOnOneLine() {
    let line = StderrLineFormat.line(
        timestamp: at, level: .error, metadata: ["path": "/a b/c", "empty": "", "nl": "x\ny"],
        message: "first\nsecond\tthird \\ \u{1B}[31m")
    #expect(!line.contains("\n"))
    #expect(line == #"2026-11-22T16:20:00.123Z error [empty="" nl=x\ny path="/a b/c"] first\nsecond\tthird \\ \u{1B}[31m"#)
}

@Test func handlerWritesOneLinePerRecordWithMergedMetadata() {
    let lines = LineRecorder()
    var logger = Logger(label: "tether.test") { _ in
        StderrLogHandler(levelBox: LogLevelBox(.trace), output: lines.append)
    }
    logger[metadataKey: "tether.partition"] = "store-17"
    logger.warning("reset\nstarted", metadata: ["tether.reset_id": "r1"])
    let written = lines.lines
    #expect(written.count == 1)
    #expect(written[0].hasSuffix("Z warn  [tether.partition=store-17 tether.reset_id=r1] reset\\nstarted"))
    #expect(written[0].wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z .*/) != nil)
}

@Test func timestampsAreUTCWithMilliseconds() {
    #expect(LogTimestamp(seconds: 0).description == "1970-01-01T00:00:00.000Z")
    #expect(LogTimestamp(seconds: 951_782_400, nanoseconds: 999_999_999).description == "2000-02-29T00:00:00.999Z")
}
