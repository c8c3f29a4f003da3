/// How many device reports one connection may send: a bucket of ``burst`` reports refilled at
/// one per ``interval``. An agent sends one when it connects and then at most one per
/// `[device] report_interval_seconds` (at least 1 s); a connection that sends faster has its
/// excess dropped, so a hostile device cannot turn the ledger into a write load. Pure: the
/// caller passes the time.
struct ReportAllowance: Sendable {
    static let burst = 10
    static let interval: Duration = .seconds(1)

    private var tokens = Double(Self.burst)
    private var last: ContinuousClock.Instant?
    /// Reports dropped since the last one allowed (for the log).
    private(set) var dropped = 0

    /// Whether a report arriving at `now` is kept.
    mutating func allow(at now: ContinuousClock.Instant) -> Bool {
        if let last {
            let refill = (now - last) / Self.interval
            tokens = min(Double(Self.burst), tokens + refill)
        }
        last = now
        guard tokens >= 1 else {
            dropped += 1
            return false
        }
        tokens -= 1
        dropped = 0
        return true
    }
}
