import CTetherShims
import Foundation

/// The pages of the agent's own executable file mapped into it: its code, read-only data and
/// the untouched part of its data (docs/store.md, "Memory").
///
/// `tetherd` is one static binary of about 140 MB (the Swift runtime, Foundation, NIO, GRDB
/// and the agent): after start, some 30 MB of it stay mapped, counted in the agent's RSS
/// although no idle agent runs that code. They are clean copies of the file, which the kernel
/// drops under memory pressure anyway; ``pageOut()`` drops them as soon as the whole agent is
/// idle, and the few pages used again come back from the page cache or the file when the agent
/// next runs them. Pages the agent wrote (relocated pointers, globals) are anonymous and stay.
enum ProgramPages {
    /// Pages out every mapping of the executable file; returns how many bytes were advised
    /// (0 where `/proc` or `MADV_PAGEOUT` is unavailable: nothing changes then).
    @discardableResult
    static func pageOut() -> Int {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"),
            let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        else { return 0 }
        var advised = 0
        for range in mappings(of: executable, in: maps) {
            guard let start = UnsafeMutableRawPointer(bitPattern: range.lowerBound) else { continue }
            if tether_page_out(start, range.count) == 0 { advised += range.count }
        }
        return advised
    }

    /// The address ranges that `/proc/self/maps` text shows mapped from `path`.
    static func mappings(of path: String, in maps: String) -> [Range<UInt>] {
        maps.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[5].trimmingCharacters(in: .whitespaces) == path else { return nil }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let low = UInt(bounds[0], radix: 16), let high = UInt(bounds[1], radix: 16), low < high
            else { return nil }
            return low..<high
        }
    }
}
