import Logging
import PostgresNIO
import ServiceLifecycle

/// The other half of ``PostgresNotifier``: a connection of its own that `LISTEN`s for what
/// other instances announce and applies it to this instance's sessions and policy. After
/// every (re)connect, and every ``resyncInterval`` besides, it re-reads flags, schemas, grants
/// and heads, so a notification lost while disconnected delays a change but never loses it.
/// Device credentials are re-checked at a (re)connect only: while the connection lives, every
/// device change arrives as a notification.
struct PostgresEventListener: Service {
    let storage: PostgresServerStorage
    let control: ServerControl
    let notifier: PostgresNotifier
    let resyncInterval: Duration
    let logger: Logger

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await listen() }
                    group.addTask { try await resynchronizeOnTimer() }
                    try await group.next()
                    group.cancelAll()
                }
            }
        } catch is CancellationError {
            return
        }
    }

    private func listen() async throws {
        var backoff = Duration.milliseconds(100)
        var failing = false
        while !Task.isCancelled {
            do {
                let connection = try await storage.connect()
                var failure: (any Error)? = nil
                do {
                    try await withTaskCancellationHandler {
                        try await storage.holdInstanceLock(notifier.holderKey, on: connection)
                        try await connection.listen(on: PostgresNotifier.channel) { notifications in
                            if failing { logger.notice("notification connection to the database is back") }
                            failing = false
                            backoff = .milliseconds(100)
                            try await catchUp(devices: true)
                            for try await notification in notifications {
                                let (from, events) = ClusterEvent.parse(payload: notification.payload)
                                if from != notifier.sender { await control.apply(remote: events) }
                            }
                        }
                    } onCancel: {
                        let _: EventLoopFuture<Void> = connection.close()
                    }
                } catch {
                    failure = error
                }
                // Closed and awaited on every path (a connection must not be dropped open).
                let _: EventLoopFuture<Void> = connection.close()
                try? await connection.closeFuture.get()  // closing: its error changes nothing
                if let failure { throw failure }
            } catch {
                if Task.isCancelled { return }
                if !failing {
                    logger.warning("notification connection to the database lost; reconnecting", metadata: ["error": "\(PostgresServerStorage.describe(any: error))"])
                }
                failing = true
            }
            try await Task.sleep(for: backoff)
            backoff = min(backoff * 2, .seconds(5))
        }
    }

    private func resynchronizeOnTimer() async throws {
        while true {
            try await Task.sleep(for: resyncInterval)
            try await catchUp(devices: false)
        }
    }

    private func catchUp(devices: Bool) async throws {
        do {
            try await control.resynchronize(devices: devices)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.warning("cannot re-read the shared state", metadata: ["error": "\(error)"])
        }
    }
}
