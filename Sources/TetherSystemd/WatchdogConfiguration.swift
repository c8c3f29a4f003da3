import Glibc

/// The service manager's watchdog settings, from `WATCHDOG_USEC` and `WATCHDOG_PID`
/// (`WatchdogSec=` in the unit).
package enum WatchdogConfiguration {
    /// The watchdog timeout systemd enforces, or `nil` when there is none for this process:
    /// `WATCHDOG_USEC` unset, not a positive number, or `WATCHDOG_PID` set to another process.
    /// The daemon pings at half this interval.
    package static func interval(environment: [String: String], processID: Int32) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = UInt64(text), microseconds > 0 else {
            return nil
        }
        if let pidText = environment["WATCHDOG_PID"] {
            guard let pid = Int32(pidText), pid == processID else { return nil }
        }
        return .microseconds(Int64(clamping: microseconds))
    }

    /// ``interval(environment:processID:)`` for this process.
    package static func current() -> Duration? {
        var environment: [String: String] = [:]
        for name in ["WATCHDOG_USEC", "WATCHDOG_PID"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        return interval(environment: environment, processID: getpid())
    }
}
