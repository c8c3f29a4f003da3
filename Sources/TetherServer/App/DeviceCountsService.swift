import Logging
import ServiceLifecycle
import Synchronization

/// Counts the device ledger for `/metrics` every `interval` (the first time at start), so that
/// a scrape reads memory, never the storage (docs/server.md, "Health check and metrics"). A
/// storage that cannot answer leaves the last counts in place; the failure is logged once.
/// Each round also writes when enrolled devices were last seen, in one batch
/// (``DeviceCredentials/flushSeen()``; kept for the next round when the storage cannot answer).
struct DeviceCountsService<C: Clock>: Service where C.Duration == Duration {
    let service: SyncService
    let interval: Duration
    let clock: C
    let logger: Logger

    func run() async throws {
        try await PeriodicRounds(interval: interval, clock: clock, immediately: true).run { [service, logger] failedBefore in
            var failing = failedBefore
            do {
                let counts = try await service.deviceCounts()
                service.ledgerCounts.withLock { $0 = counts }
                if failing { logger.notice("the device ledger is counted again") }
                failing = false
            } catch {
                if !failing, !Task.isCancelled {
                    logger.warning(
                        "cannot count the device ledger; /metrics shows the last counts until the storage answers",
                        metadata: ["error": "\(SyncService.oneLine(error))"])
                }
                failing = true
            }
            do {
                try await service.deviceCredentials.flushSeen()
            } catch {
                if !failing, !Task.isCancelled {
                    logger.warning("cannot write when devices were last seen; kept for the next round", metadata: [
                        "error": "\(SyncService.oneLine(error))",
                    ])
                }
            }
            return failing
        }
    }
}
