/// Tells the watchdog whether the process is making progress (for the agent: every session
/// made progress in the last N seconds). While it answers `false` the watchdog stops pinging,
/// so systemd kills and restarts a stuck daemon.
package protocol HealthCheck: Sendable {
    func isMakingProgress() async -> Bool
}

/// A ``HealthCheck`` made from a closure.
package struct ClosureHealthCheck: HealthCheck {
    private let check: @Sendable () async -> Bool

    package init(_ check: @escaping @Sendable () async -> Bool) {
        self.check = check
    }

    package func isMakingProgress() async -> Bool { await check() }
}

/// A ``HealthCheck`` that always reports progress (a process with nothing that can get stuck).
package struct AlwaysHealthy: HealthCheck {
    package init() {}
    package func isMakingProgress() async -> Bool { true }
}
