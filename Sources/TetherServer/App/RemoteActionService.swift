import Logging
import ServiceLifecycle

/// Every `interval` (the first time one interval after start): expires the remote actions whose
/// time ran out, prunes old ended ones, and sends devices connected here pending actions they
/// have not had — those a lost announcement of another instance left waiting
/// (``ServerControl/sweepActions()``). A failure is logged; the next round tries again.
struct RemoteActionService<C: Clock>: Service where C.Duration == Duration {
    let control: ServerControl
    let interval: Duration
    let clock: C
    let logger: Logger

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                var failing = false
                while true {
                    try await clock.sleep(for: interval)
                    do {
                        try await control.sweepActions()
                        if failing { logger.notice("remote actions are swept again") }
                        failing = false
                    } catch {
                        if !failing, !Task.isCancelled {
                            logger.warning("cannot expire remote actions; the next round tries again", metadata: [
                                "error": "\(SyncService.oneLine(error))",
                            ])
                        }
                        failing = true
                    }
                }
            }
        } catch is CancellationError {
            return
        }
    }
}
