import Logging
import ServiceLifecycle

/// Pings systemd's watchdog (`WATCHDOG=1`) every half watchdog interval while the injected
/// ``HealthCheck`` reports progress (docs/contract.md: systemd).
///
/// When the check fails the service stops pinging — logging once at warn — so systemd kills the
/// stuck process after `WatchdogSec=`; when the check passes again it resumes and logs that once
/// (info). Without a watchdog interval (`WATCHDOG_USEC` unset) it waits for shutdown doing
/// nothing. It returns promptly on graceful shutdown or cancellation.
package struct WatchdogService<C: Clock>: Service where C.Duration == Duration {
    /// The watchdog timeout; pings go out at half of it. `nil`: no watchdog.
    package let interval: Duration?
    private let notifier: SystemdNotifier
    private let healthCheck: any HealthCheck
    private let clock: C
    private let logger: Logger

    /// - Parameters:
    ///   - interval: the watchdog timeout (``WatchdogConfiguration/current()``), `nil` for none.
    ///   - notifier: where `WATCHDOG=1` goes.
    ///   - healthCheck: asked before each ping.
    ///   - clock: drives the ping period (a manual clock in tests).
    ///   - logger: for the stopped / resumed records.
    package init(
        interval: Duration?, notifier: SystemdNotifier, healthCheck: any HealthCheck, clock: C, logger: Logger
    ) {
        self.interval = interval
        self.notifier = notifier
        self.healthCheck = healthCheck
        self.clock = clock
        self.logger = logger
    }

    /// The time between two pings: half the watchdog interval.
    package var pingPeriod: Duration? { interval.map { $0 / 2 } }

    package func run() async throws {
        guard let period = pingPeriod, period > .zero else {
            // No watchdog for this process: stay in the group until it shuts down.
            do { try await gracefulShutdown() } catch is CancellationError {}
            return
        }
        await cancelWhenGracefulShutdown {
            await self.pingLoop(period: period)
        }
    }

    private func pingLoop(period: Duration) async {
        var stalled = false
        var deadline = clock.now
        while !Task.isCancelled {
            if await healthCheck.isMakingProgress() {
                if stalled {
                    stalled = false
                    logger.notice("progress again: watchdog pings resumed")
                }
                notifier.watchdogPing()
            } else if !stalled {
                stalled = true
                logger.warning(
                    "no progress: watchdog pings stopped, systemd will restart the service unless progress resumes",
                    metadata: ["tether.watchdog_usec": "\(interval.map(Self.microseconds) ?? 0)"])
            }
            deadline = deadline.advanced(by: period)
            let now = clock.now
            if deadline < now { deadline = now }  // fell behind (suspended machine): do not burst
            do {
                try await clock.sleep(until: deadline, tolerance: nil)
            } catch {
                return  // cancelled: graceful shutdown or group cancellation
            }
        }
    }

    private static func microseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}

extension WatchdogService where C == ContinuousClock {
    /// A watchdog service for this process: the interval from `WATCHDOG_USEC`/`WATCHDOG_PID`,
    /// libsystemd's `sd_notify`, the continuous clock.
    package init(healthCheck: any HealthCheck, logger: Logger) {
        self.init(
            interval: WatchdogConfiguration.current(), notifier: SystemdNotifier(), healthCheck: healthCheck,
            clock: ContinuousClock(), logger: logger)
    }
}
