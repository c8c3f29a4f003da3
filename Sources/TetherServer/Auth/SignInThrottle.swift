/// Who may try the console's sign-in now (docs/server.md, "Web console"): per peer address, a
/// few wrong tokens are free, then each further one doubles a wait (from ``baseWait`` up to
/// ``maximumWait``) during which that peer's sign-ins are answered 429 without the token being
/// looked at; a right token clears the peer. At most ``capacity`` peers are remembered (the one
/// seen longest ago goes), so many addresses cannot grow memory.
///
/// It also folds the log: a peer's first failure is logged, then at most one line per peer per
/// ``logInterval`` with the count since the last line. Pure: the caller passes the time and
/// logs what it is told.
struct SignInThrottle: Sendable {
    static let freeFailures = 5
    static let baseWait: Duration = .seconds(1)
    static let maximumWait: Duration = .seconds(300)
    static let logInterval: Duration = .seconds(60)
    static let capacity = 1024

    typealias Instant = ContinuousClock.Instant

    struct Peer: Sendable, Equatable {
        /// Wrong tokens since the last right one.
        var failures = 0
        /// Sign-ins refused before then without a look at the token.
        var waitUntil: Instant?
        var lastSeen: Instant
        /// When the last log line about this peer was written; nil: none yet.
        var loggedAt: Instant?
        /// Failures and refused attempts since that line.
        var unloggedFailures = 0
        var unloggedRefusals = 0
    }

    /// Whether a sign-in from a peer may be tried now.
    enum Admission: Sendable, Equatable {
        case tryIt
        /// Answer 429; `retryAfter` is whole seconds, at least 1.
        case wait(retryAfter: Int)
    }

    /// A log line to write about a peer (never the token).
    struct LogLine: Sendable, Equatable {
        var peer: String
        var message: String
    }

    private(set) var peers: [String: Peer] = [:]

    /// What the log lines call a refusal and its cause: the console's sign-in by default;
    /// enrollment (``EnrollmentService``) counts its refused requests with the same rules.
    struct Wording: Sendable, Equatable {
        var refused: String
        var cause: String
        static let consoleSignIn = Wording(refused: "console sign-in refused", cause: "the admin token was not accepted")
    }

    var wording = Wording.consoleSignIn

    /// Asks before the request's body is read. A refusal is counted for the log; its line, if
    /// due, comes back too.
    mutating func admit(_ peer: String, now: Instant) -> (Admission, LogLine?) {
        guard var entry = peers[peer], let until = entry.waitUntil, now < until else { return (.tryIt, nil) }
        entry.lastSeen = now
        entry.unloggedRefusals += 1
        let line = fold(&entry, peer: peer, now: now)
        peers[peer] = entry
        return (.wait(retryAfter: Self.wholeSeconds(until - now)), line)
    }

    /// A wrong token from `peer`: its wait (nil while failures are free) and a log line if due.
    mutating func failed(_ peer: String, now: Instant) -> (wait: Duration?, log: LogLine?) {
        var entry = peers[peer] ?? makeRoom(for: peer, now: now)
        entry.failures += 1
        entry.lastSeen = now
        entry.unloggedFailures += 1
        let wait = Self.wait(afterFailures: entry.failures)
        entry.waitUntil = wait.map { now + $0 }
        let line = fold(&entry, peer: peer, now: now)
        peers[peer] = entry
        return (wait, line)
    }

    /// The right token from `peer`: it starts afresh.
    mutating func succeeded(_ peer: String) {
        peers[peer] = nil
    }

    /// The wait after the `failures`-th wrong token in a row.
    static func wait(afterFailures failures: Int) -> Duration? {
        let beyond = failures - freeFailures
        guard beyond > 0 else { return nil }
        // 1 s, 2 s, 4 s, …; past 2^9 the cap has been reached anyway.
        let doubled = baseWait * (1 << min(beyond - 1, 20))
        return min(doubled, maximumWait)
    }

    /// A new peer's entry; when the table is full, the peer seen longest ago is forgotten.
    private mutating func makeRoom(for peer: String, now: Instant) -> Peer {
        if peers.count >= Self.capacity, let oldest = peers.min(by: { $0.value.lastSeen < $1.value.lastSeen })?.key {
            peers[oldest] = nil
        }
        return Peer(lastSeen: now)
    }

    /// The line due about `entry` now, if any; counts are reset once one is written.
    private func fold(_ entry: inout Peer, peer: String, now: Instant) -> LogLine? {
        guard let loggedAt = entry.loggedAt else {
            entry.loggedAt = now
            entry.unloggedFailures = 0
            entry.unloggedRefusals = 0
            return LogLine(peer: peer, message: "\(wording.refused) for \(peer): \(wording.cause)")
        }
        let since = now - loggedAt
        guard since >= Self.logInterval else { return nil }
        var message = "\(wording.refused) for \(peer): \(entry.unloggedFailures) failures in the last \(Self.wholeSeconds(since)) s"
        if entry.unloggedRefusals > 0 { message += ", \(entry.unloggedRefusals) attempts answered 429 while it waited" }
        if let until = entry.waitUntil, now < until { message += "; it waits \(Self.wholeSeconds(until - now)) s" }
        entry.loggedAt = now
        entry.unloggedFailures = 0
        entry.unloggedRefusals = 0
        return LogLine(peer: peer, message: message)
    }

    static func wholeSeconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }
}
