import Foundation

/// Memory and CPU figures of a running process, read from `/proc/<pid>/status` and `/stat`.
package struct ProcessProbe: Sendable {
    package let processID: Int32

    package init(processID: Int32) { self.processID = processID }

    /// Peak resident set size (`VmHWM`) in bytes since start or the last ``resetPeak()``.
    package var peakResidentBytes: Int? { statusField("VmHWM") }
    /// Current resident set size (`VmRSS`) in bytes.
    package var residentBytes: Int? { statusField("VmRSS") }
    /// The anonymous part of it (`RssAnon`: heap, stacks, written globals) in bytes.
    package var residentAnonymousBytes: Int? { statusField("RssAnon") }
    /// The file-backed part of it (`RssFile`: mapped pages of the program and its libraries,
    /// clean copies of the files) in bytes.
    package var residentFileBytes: Int? { statusField("RssFile") }

    /// Resets `VmHWM` to the current RSS (`echo 5 > /proc/<pid>/clear_refs`, Linux ≥ 4.0), so
    /// that the peak of one phase can be read. False when the kernel refused (not root).
    @discardableResult
    package func resetPeak() -> Bool {
        // Refused (not root): false.
        (try? "5".write(toFile: "/proc/\(processID)/clear_refs", atomically: false, encoding: .utf8)) != nil
    }

    /// User plus system CPU time in seconds (`utime + stime` of `/proc/<pid>/stat`).
    package var cpuSeconds: Double? {
        // Unreadable (the process exited): nil.
        guard let text = try? String(contentsOfFile: "/proc/\(processID)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // Fields after the command name: state is field 3; utime and stime are fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    private func statusField(_ name: String) -> Int? {
        // Unreadable (the process exited): nil.
        guard let text = try? String(contentsOfFile: "/proc/\(processID)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count >= 2, let kilobytes = Int(parts[1]) else { return nil }
            return kilobytes * 1024
        }
        return nil
    }
}
