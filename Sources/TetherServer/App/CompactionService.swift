import Logging
import ServiceLifecycle

/// Drops history older than `history_horizon_days` every `interval` (the first time one
/// interval after start), then expires client files not seen for as long. Devices that last
/// synced before the dropped history get 222; devices away longer than the horizon get 208.
struct CompactionService<C: Clock>: Service where C.Duration == Duration {
    let control: ServerControl
    let interval: Duration
    let clock: C
    let logger: Logger

    func run() async throws {
        try await PeriodicRounds(interval: interval, clock: clock).run { [control, logger] _ in
            do {
                _ = try await control.compact(horizonSeconds: nil)
            } catch {
                logger.error("history compaction failed", metadata: ["error": "\(error)"])
            }
            do {
                _ = try await control.expireClientFiles()
            } catch {
                logger.error("client file expiry failed", metadata: ["error": "\(error)"])
            }
            return false  // each failure is logged: compaction runs hourly
        }
    }
}
