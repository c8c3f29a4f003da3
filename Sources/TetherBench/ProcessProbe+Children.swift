import Foundation

extension ProcessProbe {
    /// CPU seconds of the process and its children: its own `utime + stime`, its reaped
    /// children's (`cutime + cstime`), and the live children's own. For PostgreSQL's postmaster,
    /// which reaps its backends: the whole server's CPU. Nil when the process is gone.
    package var cpuSecondsWithChildren: Double? {
        guard let own = Self.statFields(processID), own.count > 14 else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = own[11...14].compactMap { Double($0) }.reduce(0, +)
        // Unreadable /proc (not Linux): the process's own figures only.
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let child = Int32(entry), child != processID, let fields = Self.statFields(child), fields.count > 12,
                Int32(fields[1]) == processID
            else { continue }
            total += fields[11...12].compactMap { Double($0) }.reduce(0, +)
        }
        return total / ticks
    }

    /// `/proc/<pid>/stat` after the command name: state, ppid, … (utime is the 12th).
    static func statFields(_ processID: Int32) -> [Substring]? {
        // Unreadable (the process exited): nil.
        guard let text = try? String(contentsOfFile: "/proc/\(processID)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }
}
