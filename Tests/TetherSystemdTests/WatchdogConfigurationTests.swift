import Testing
import TetherSystemd

@Test func watchdogIntervalFromEnvironment() {
    #expect(WatchdogConfiguration.interval(environment: [:], processID: 10) == nil)
    #expect(WatchdogConfiguration.interval(environment: ["WATCHDOG_USEC": "30000000"], processID: 10) == .seconds(30))
    #expect(WatchdogConfiguration.interval(environment: ["WATCHDOG_USEC": "0"], processID: 10) == nil)
    #expect(WatchdogConfiguration.interval(environment: ["WATCHDOG_USEC": "soon"], processID: 10) == nil)
}

@Test func watchdogPidMustBeThisProcess() {
    let usec = ["WATCHDOG_USEC": "200000"]
    #expect(WatchdogConfiguration.interval(environment: usec.merging(["WATCHDOG_PID": "10"]) { $1 }, processID: 10)
        == .milliseconds(200))
    #expect(WatchdogConfiguration.interval(environment: usec.merging(["WATCHDOG_PID": "11"]) { $1 }, processID: 10) == nil)
    #expect(WatchdogConfiguration.interval(environment: usec.merging(["WATCHDOG_PID": "x"]) { $1 }, processID: 10) == nil)
}
