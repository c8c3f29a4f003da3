import TetherProtocol

/// When the agent tells the server's device ledger about its partitions (docs/server.md,
/// "Device ledger"): everything once a connection is up, then the partitions whose figures
/// changed at most once per `interval`, and everything again every `heartbeat` so that a
/// quiet device is not taken for a stale one. Pure: the loop passes the time and the figures.
struct DeviceReportSchedule: Sendable {
    typealias Fingerprint = PartitionStatus.LedgerFingerprint

    enum Decision: Sendable, Hashable {
        /// Report these partitions now.
        case send([String])
        /// Nothing to send before `until`; `orChange`: sooner if the figures change (false when
        /// changes are already waiting for the interval to pass: another one changes nothing).
        case wait(until: ContinuousClock.Instant, orChange: Bool)
    }

    let interval: Duration
    let heartbeat: Duration
    private var sent: [String: Fingerprint] = [:]
    private var lastSend: ContinuousClock.Instant?
    private var lastFull: ContinuousClock.Instant?

    init(interval: Duration, heartbeat: Duration = .seconds(600)) {
        self.interval = interval
        self.heartbeat = heartbeat
    }

    /// What to do with the partitions' `current` figures at `now`.
    func decide(_ current: [String: Fingerprint], at now: ContinuousClock.Instant) -> Decision {
        guard let lastSend, let lastFull else { return .send(current.keys.sorted()) }
        let nextFull = lastFull + heartbeat
        let changed = current.filter { sent[$0.key] != $0.value }.keys.sorted()
        if changed.isEmpty && now < nextFull { return .wait(until: nextFull, orChange: true) }
        let allowed = lastSend + interval
        if now < allowed { return .wait(until: allowed, orChange: false) }
        return .send(now >= nextFull ? current.keys.sorted() : changed)
    }

    /// `partitions` were reported at `now` with these figures.
    mutating func didSend(_ partitions: [String: Fingerprint], of current: [String: Fingerprint], at now: ContinuousClock.Instant) {
        for (name, fingerprint) in partitions { sent[name] = fingerprint }
        lastSend = now
        if Set(partitions.keys).isSuperset(of: current.keys) { lastFull = now }
    }
}
