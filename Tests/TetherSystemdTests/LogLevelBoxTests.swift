import Logging
import Synchronization
import Testing
import TetherSystemd

@Test func boxSetReturnsPreviousLevel() {
    let box = LogLevelBox(.warn)
    #expect(box.level == .warn && box.loggerLevel == .warning)
    #expect(box.set(.trace) == .warn)
    #expect(box.level == .trace)
}

@Test func changingTheBoxAppliesToExistingLoggers() {
    let box = LogLevelBox(.info)
    let lines = Mutex<[String]>([])
    let logger = Logger(label: "tether.test") { _ in
        StderrLogHandler(levelBox: box) { line in lines.withLock { $0.append(line) } }
    }
    logger.notice("info shown")
    logger.info("detail hidden")
    box.level = .detail
    logger.info("detail shown")
    logger.debug("debug hidden")
    box.level = .error
    logger.warning("warn hidden")
    logger.error("error shown")
    let written = lines.withLock { $0 }
    #expect(written.count == 3)
    for (line, ending) in zip(written, ["info  info shown", "detail detail shown", "error error shown"]) {
        #expect(line.hasSuffix("Z " + ending), "\(line)")
    }
}

@Test func aLoggerWithItsOwnLevelIgnoresTheBox() {
    let box = LogLevelBox(.error)
    var logger = Logger(label: "tether.test") { _ in StderrLogHandler(levelBox: box) { _ in } }
    #expect(logger.logLevel == .error)
    logger.logLevel = .trace
    box.level = .warn
    #expect(logger.logLevel == .trace)
    let other = Logger(label: "tether.other") { _ in StderrLogHandler(levelBox: box) { _ in } }
    #expect(other.logLevel == .warning)
}

