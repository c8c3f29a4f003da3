import Foundation
import TetherProtocol

/// Whether an automatic client reset may start now: the guard that keeps a partition out of a
/// reset loop whatever the server says (docs/client-reset.md, "Reset loops"). Pure: it reads
/// the partition's reset records, which outlive restarts, so a restart neither resets the
/// count nor skips a wait.
///
/// A reset is a **repeat** when the partition's previous reset finished and no bind succeeded
/// since: the server refused the very store that reset produced. A repeat waits (capped,
/// exponential, counted from the previous reset's end) and after ``Limits/automaticRepeats``
/// of them the next one is a manual reset whose reason starts with `reset loop`. Independently,
/// at most ``Limits/perWindow`` resets start in any ``Limits/window``.
package enum ResetLoopGuard {
    package struct Limits: Sendable, Hashable {
        /// Repeats carried out automatically (each after its wait); the next one is manual.
        package var automaticRepeats: Int
        /// The wait before the first repeat, in seconds; each further one is `multiplier` times longer.
        package var firstDelay: Double
        package var multiplier: Double
        package var maximumDelay: Double
        /// At most `perWindow` resets of a partition start within `window` seconds.
        package var window: Double
        package var perWindow: Int

        package init(
            automaticRepeats: Int = 2, firstDelay: Double = 10, multiplier: Double = 4, maximumDelay: Double = 300,
            window: Double = 60, perWindow: Int = 3
        ) {
            self.automaticRepeats = automaticRepeats
            self.firstDelay = firstDelay
            self.multiplier = multiplier
            self.maximumDelay = maximumDelay
            self.window = window
            self.perWindow = perWindow
        }

        /// The wait before repeat `n` (from 1), in seconds.
        package func delay(beforeRepeat n: Int) -> Double {
            min(maximumDelay, firstDelay * pow(multiplier, Double(max(n - 1, 0))))
        }
    }

    package enum Verdict: Sendable, Hashable {
        /// Start the reset now; `repeats` goes on its record.
        case start(repeats: Int)
        /// Do not start before `until` (seconds since the epoch); then ask again.
        case wait(until: Double, repeats: Int, reason: String)
        /// A reset loop: this reset is a manual one, for `reason`.
        case manual(repeats: Int, reason: String)
    }

    /// - Parameters:
    ///   - error: the error that calls for the reset.
    ///   - records: the partition's reset records, in any order.
    ///   - now: seconds since the epoch.
    package static func assess(error: SyncError, records: [ResetRecord], now: Double, limits: Limits = Limits()) -> Verdict {
        let resets = records.filter { !$0.isQuarantine }.sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
        var repeats = 0
        var notBefore = 0.0
        var reason = ""
        if let last = resets.last, last.phase == .done, last.confirmedByBind != true {
            repeats = (last.loopRepeats ?? 0) + 1
            let version = last.resultServerVersion.map { " at server version \($0)" } ?? ""
            let what = "error \(error.code.rawValue) (\(error.code.name)) right after reset \(last.id)\(version) finished, with no successful bind in between"
            if repeats > limits.automaticRepeats {
                return .manual(repeats: repeats, reason: "reset loop: \(what), \(repeats) times in a row; the server keeps refusing the store a reset gives it")
            }
            notBefore = (last.finishedAt ?? last.startedAt) + limits.delay(beforeRepeat: repeats)
            reason = "reset loop guard: \(what) (repeat \(repeats) of \(limits.automaticRepeats) before a manual reset)"
        }
        let recent = resets.map(\.startedAt).filter { now - $0 < limits.window }.sorted()
        if recent.count >= limits.perWindow {
            let windowOpens = recent[recent.count - limits.perWindow] + limits.window
            if windowOpens > notBefore {
                notBefore = windowOpens
                reason = "reset rate limit: \(recent.count) resets of this partition started in the last \(Int(limits.window)) s"
            }
        }
        return now < notBefore ? .wait(until: notBefore, repeats: repeats, reason: reason) : .start(repeats: repeats)
    }
}
