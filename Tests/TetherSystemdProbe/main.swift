// tether-systemd-probe: a test-only child process for TetherSystemdTests (never installed).
// It uses TetherSystemd exactly as a daemon under systemd would, with the environment the test
// gives it (NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID, JOURNAL_STREAM, INVOCATION_ID), which
// the tests cannot set in their own, shared, process.
//
//   tether-systemd-probe notify ready status:TEXT reloading stopping extend:USEC watchdog
//   tether-systemd-probe watchdog STALL_FILE     pings while STALL_FILE is absent; SIGTERM stops
//   tether-systemd-probe log IDENTIFIER DESTINATION   bootstraps logging, one record per level
import Foundation
import Logging
import ServiceLifecycle
import TetherSystemd
import UnixSignals

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("tether-systemd-probe: \(message)\n".utf8))
    exit(2)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else { fail("usage: notify …|watchdog STALL_FILE|log IDENTIFIER DESTINATION") }

switch command {
case "notify":
    let notifier = SystemdNotifier()
    for step in arguments.dropFirst() {
        let (name, value) = step.split(separator: ":", maxSplits: 1).map(String.init).pair
        let delivery: SystemdNotifier.Delivery =
            switch name {
            case "ready": notifier.ready()
            case "status": notifier.status(value ?? "")
            case "reloading": notifier.reloading()
            case "stopping": notifier.stopping()
            case "extend": notifier.extendTimeout(microseconds: UInt64(value ?? "") ?? 0)
            case "watchdog": notifier.watchdogPing()
            default: fail("unknown notification \(step)")
            }
        say("\(name): \(delivery)")
    }

case "watchdog":
    guard arguments.count == 2 else { fail("usage: watchdog STALL_FILE") }
    let stallFile = arguments[1]
    TetherLogging.bootstrap(identifier: "tether-systemd-probe", level: .debug, destination: .stderr)
    let logger = Logger(label: "tether.watchdog")
    let health = ClosureHealthCheck { !FileManager.default.fileExists(atPath: stallFile) }
    let watchdog = WatchdogService(healthCheck: health, logger: logger)
    say("watchdog interval: \(watchdog.interval.map { "\($0)" } ?? "none")")
    let group = ServiceGroup(services: [watchdog], gracefulShutdownSignals: [.sigterm], logger: logger)
    do {
        try await group.run()
    } catch {
        fail("service group: \(error)")
    }
    say("watchdog stopped")

case "log":
    guard arguments.count == 3 else { fail("usage: log IDENTIFIER DESTINATION") }
    let destination: LogDestination
    do { destination = try LogDestination(parsing: arguments[2]) } catch { fail("\(error)") }
    let decision = TetherLogging.bootstrap(identifier: arguments[1], level: .trace, destination: destination)
    say("destination: \(decision)")
    var logger = Logger(label: "tether.probe")
    logger[metadataKey: "tether.partition"] = "store-17"
    for level in TetherLogLevel.allCases {
        logger.log(level: level.loggerLevel, "probe record at \(level)")
    }

default:
    fail("unknown command \(command)")
}

extension Array where Element == String {
    fileprivate var pair: (String, String?) { (self[0], count > 1 ? self[1] : nil) }
}
