import ServiceLifecycle

/// Where the `/sync` endpoint's work runs: a message's work, a session's state or its catch-up
/// after a wake-up, each in a child task of this service's task group that ends with the work.
/// An idle connection holds no task (issue 50): its channel handler submits work here when a
/// message arrives, its sessions' ``DownloadWakeup``s when their partition changes.
///
/// Runs until the service group shuts down, listed before the sync listener so that it ends
/// after it: a graceful shutdown first closes the connections (the listener's quiescing), then
/// lets the work in flight finish here.
package final class SyncWorkQueue: Service, Sendable {
    package typealias Job = @Sendable () async -> Void

    private let jobs: AsyncStream<Job>
    private let continuation: AsyncStream<Job>.Continuation

    package init() {
        (jobs, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Runs `job` in a task of its own. Once the queue has ended (shutdown), nothing runs: the
    /// connections it would serve are closed.
    package func submit(_ job: @escaping Job) {
        continuation.yield(job)
    }

    package func run() async {
        await withDiscardingTaskGroup { group in
            await withGracefulShutdownHandler {
                for await job in jobs {
                    group.addTask { await job() }
                }
            } onGracefulShutdown: { [continuation] in
                continuation.finish()
            }
        }
    }

    /// Ends the queue when its task is cancelled (tests that run it beside their body).
    package func finish() {
        continuation.finish()
    }
}
