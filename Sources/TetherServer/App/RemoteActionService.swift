import Logging
import ServiceLifecycle

/// Every `interval` (the first time one interval after start): expires the remote actions whose
/// time ran out, prunes old ended ones, and sends devices connected here pending actions they
/// have not had — those a lost announcement of another instance left waiting
/// (``ServerControl/sweepActions()``). A failure is logged once; the next round tries again.
struct RemoteActionService<C: Clock>: Service where C.Duration == Duration {
    let control: ServerControl
    let interval: Duration
    let clock: C
    let logger: Logger

    func run() async throws {
        try await PeriodicRounds(interval: interval, clock: clock).run { [control, logger] failing in
            do {
                try await control.sweepActions()
                if failing { logger.notice("remote actions are swept again") }
                return false
            } catch {
                if !failing, !Task.isCancelled {
                    logger.warning("cannot expire remote actions; the next round tries again", metadata: ["error": "\(SyncService.oneLine(error))"])
                }
                return true
            }
        }
    }
}
