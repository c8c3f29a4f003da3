import Glibc

/// A wall-clock instant with millisecond output, written as ISO 8601 in UTC
/// (`2026-11-22T16:20:00.123Z`), the timestamp of a stderr log line.
package struct LogTimestamp: Sendable, Equatable, CustomStringConvertible {
    /// Seconds since the Unix epoch.
    package var seconds: Int
    /// Nanoseconds within the second.
    package var nanoseconds: Int

    package init(seconds: Int, nanoseconds: Int = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// The current time (`CLOCK_REALTIME`).
    package static var now: LogTimestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return LogTimestamp(seconds: spec.tv_sec, nanoseconds: spec.tv_nsec)
    }

    package var description: String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return pad(parts.tm_year + 1900, 4) + "-" + pad(parts.tm_mon + 1, 2) + "-" + pad(parts.tm_mday, 2)
            + "T" + pad(parts.tm_hour, 2) + ":" + pad(parts.tm_min, 2) + ":" + pad(parts.tm_sec, 2)
            + "." + pad(Int32(nanoseconds / 1_000_000), 3) + "Z"
    }
}
