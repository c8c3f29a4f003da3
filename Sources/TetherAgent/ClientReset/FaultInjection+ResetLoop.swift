import Foundation

extension FaultInjection {
    /// `TETHER_FAULT_RESET_LOOP_FIRST_DELAY=<seconds>`: the reset-loop guard's first wait (10 s
    /// otherwise), so a test can run a loop to its manual fallback in seconds.
    static let resetLoopLimits: ResetLoopGuard.Limits = {
        var limits = ResetLoopGuard.Limits()
        if let text = ProcessInfo.processInfo.environment["TETHER_FAULT_RESET_LOOP_FIRST_DELAY"], let seconds = Double(text) {
            limits.firstDelay = seconds
        }
        return limits
    }()
}
