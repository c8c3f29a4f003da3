import PostgresNIO
import Synchronization

/// State-download connections kept open between downloads (PostgreSQL): a bind storm — every
/// device resetting after a restore — would otherwise fork a PostgreSQL backend and run a SCRAM
/// authentication for every state it reads. At most `limit` wait here (the instance reads at
/// most `max_state_downloads` states at once, so it never needs more); one idle longer than
/// ``maximumIdle`` is closed when the keeper is next used, and all are closed at shutdown.
final class IdleDownloadConnections: Sendable {
    /// How long an unused connection is kept.
    static let maximumIdle = Duration.seconds(300)

    private struct Idle {
        var connection: PostgresConnection
        var since: ContinuousClock.Instant
    }

    let limit: Int
    private let idle = Mutex<[Idle]>([])

    init(limit: Int) { self.limit = limit }

    /// Connections waiting now.
    var count: Int { idle.withLock { $0.count } }

    /// The most recently used open connection, if one waits (outside any transaction).
    func take() async -> PostgresConnection? {
        let now = ContinuousClock.now
        let (connection, stale) = idle.withLock { idle -> (PostgresConnection?, [PostgresConnection]) in
            var stale: [PostgresConnection] = []
            idle.removeAll { entry in
                let drop = entry.connection.isClosed || now - entry.since > Self.maximumIdle
                if drop { stale.append(entry.connection) }
                return drop
            }
            return (idle.popLast()?.connection, stale)
        }
        for connection in stale { try? await connection.close() }  // idle, outside a transaction: nothing to lose
        return connection
    }

    /// Keeps `connection` for the next download (its transaction ended cleanly), or closes it
    /// when enough wait already or it is closed.
    func give(_ connection: PostgresConnection) async {
        let kept = idle.withLock { idle -> Bool in
            guard !connection.isClosed, idle.count < limit else { return false }
            idle.append(Idle(connection: connection, since: .now))
            return true
        }
        if !kept { try? await connection.close() }  // its transaction ended: nothing to lose
    }

    /// Closes every waiting connection (shutdown).
    func closeAll() async {
        let all = idle.withLock { idle in
            defer { idle.removeAll() }
            return idle.map(\.connection)
        }
        for connection in all { try? await connection.close() }  // idle, at shutdown: nothing to lose
    }
}
