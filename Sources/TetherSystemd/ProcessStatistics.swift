import Foundation
import Glibc

/// What Prometheus' `process_*` metrics say of this process, read from `/proc/self` (Linux):
/// CPU time, memory, open and allowed descriptors, start time. Both programs expose them
/// (docs/server.md "Health check and metrics", docs/operations.md "Metrics").
package struct ProcessStatistics: Sendable, Hashable {
    /// User and system CPU time, in seconds.
    package var cpuSeconds: Double
    package var residentMemoryBytes: Double
    package var virtualMemoryBytes: Double
    package var openFileDescriptors: Double
    /// The soft `RLIMIT_NOFILE`.
    package var maxFileDescriptors: Double
    /// Unix time the process started.
    package var startTimeSeconds: Double

    /// Reads the current figures; nil where `/proc` cannot be read (not Linux, a sandbox).
    package static func current() -> ProcessStatistics? {
        // No /proc (not Linux, a sandbox): no figures, as said above.
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8) else { return nil }
        return parse(stat: stat, bootTime: bootTime(), ticksPerSecond: Double(sysconf(Int32(_SC_CLK_TCK))),
            pageSize: Double(sysconf(Int32(_SC_PAGESIZE))), openDescriptors: openDescriptors(), maxDescriptors: maxDescriptors())
    }

    /// `/proc/self/stat` read: fields after the command name (which may hold spaces and
    /// parentheses, so the last `)` ends it). Fields 14 and 15 are utime and stime in ticks, 22
    /// the start time in ticks after boot, 23 vsize in bytes, 24 rss in pages (proc(5)).
    static func parse(
        stat: String, bootTime: Double?, ticksPerSecond: Double, pageSize: Double, openDescriptors: Int, maxDescriptors: Int
    ) -> ProcessStatistics? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        // Field 3 (state) is the first after the name.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        func field(_ number: Int) -> Double? { fields.count > number - 3 ? Double(fields[number - 3]) : nil }
        guard ticksPerSecond > 0, let utime = field(14), let stime = field(15), let start = field(22), let vsize = field(23),
            let rss = field(24)
        else { return nil }
        return ProcessStatistics(
            cpuSeconds: (utime + stime) / ticksPerSecond, residentMemoryBytes: rss * pageSize, virtualMemoryBytes: vsize,
            openFileDescriptors: Double(openDescriptors), maxFileDescriptors: Double(maxDescriptors),
            startTimeSeconds: (bootTime ?? 0) + start / ticksPerSecond)
    }

    /// `btime` of `/proc/stat`: Unix time of the boot.
    static func bootTime() -> Double? {
        // No /proc/stat: no boot time; the start time counts from 0.
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    static func openDescriptors() -> Int {
        // The directory's own descriptor, open while it is listed, is not counted.
        // No /proc: 0 descriptors.
        max(0, ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count ?? 1) - 1)
    }

    static func maxDescriptors() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        return limit.rlim_cur > UInt(Int32.max) ? Int(Int32.max) : Int(limit.rlim_cur)
    }

    /// The Prometheus families, with help and type, as `(name, type, help, value)`.
    package var families: [(name: String, type: String, help: String, value: Double)] {
        [
            ("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds", cpuSeconds),
            ("process_resident_memory_bytes", "gauge", "Resident memory size in bytes", residentMemoryBytes),
            ("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes", virtualMemoryBytes),
            ("process_open_fds", "gauge", "Number of open file descriptors", openFileDescriptors),
            ("process_max_fds", "gauge", "Maximum number of open file descriptors (RLIMIT_NOFILE, soft)", maxFileDescriptors),
            ("process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch in seconds", startTimeSeconds),
        ]
    }

    /// The families in the Prometheus text format (appended to an exposition: swift-prometheus
    /// has no counter that can be set to an absolute value, which CPU time is).
    package var exposition: String {
        families.map { family in
            "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) \(family.type)\n\(family.name) \(Self.number(family.value))\n"
        }.joined()
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
