/// Tells the watchdog whether the process is making progress (for the agent: every session
/// made progress in the last N seconds). While it answers `false` the watchdog stops pinging,
/// so systemd kills and restarts a stuck daemon.
public protocol HealthCheck: Sendable {
    func isMakingProgress() async -> Bool
}

/// A ``HealthCheck`` made from a closure.
public struct ClosureHealthCheck: HealthCheck {
    private let check: @Sendable () async -> Bool

    public init(_ check: @escaping @Sendable () async -> Bool) {
        self.check = check
    }

    public func isMakingProgress() async -> Bool { await check() }
}

/// A ``HealthCheck`` that always reports progress (a process with nothing that can get stuck).
public struct AlwaysHealthy: HealthCheck {
    public init() {}
    public func isMakingProgress() async -> Bool { true }
}
