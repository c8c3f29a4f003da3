import ServiceLifecycle

/// The loop of a periodic service: a round every `interval` on `clock` until graceful shutdown
/// (or cancellation), the first one at once when `immediately`, else one interval after start.
/// A round handles its own failures; it is told whether the round before it failed and returns
/// whether it did, so that a lasting failure is logged once and its end once.
struct PeriodicRounds<C: Clock> where C.Duration == Duration {
    let interval: Duration
    let clock: C
    var immediately = false

    func run(_ round: @escaping @Sendable (_ failedBefore: Bool) async -> Bool) async throws {
        do {
            try await cancelWhenGracefulShutdown { [interval, clock, immediately] in
                var failed = false
                if immediately { failed = await round(failed) }
                while true {
                    try await clock.sleep(for: interval)
                    failed = await round(failed)
                }
            }
        } catch is CancellationError {
            return
        }
    }
}
