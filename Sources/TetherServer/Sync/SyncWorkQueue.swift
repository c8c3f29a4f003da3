import ServiceLifecycle
import Synchronization

/// Where the `/sync` endpoint's work runs: a message's work, a session's state or its catch-up
/// after a wake-up, each in a child task that ends with the work. An idle connection holds no
/// task (issue 50): its channel handler submits work here when a message arrives, its sessions'
/// ``DownloadWakeup``s when their partition changes.
///
/// The children are spread over ``shards`` task groups, one after another: a task group finds
/// an ending child by walking its list of children, so a change that wakes 19,000 sessions at
/// once (19,000 jobs alive, each reading the history) spent 21 % of the server's CPU there with
/// one group and 14 % with 64; with 512 (≈ 40 jobs each) it no longer shows (BENCHMARKS.md,
/// issue 50). An idle shard is a task waiting on its stream.
///
/// Runs until the service group shuts down, listed before the sync listener so that it ends
/// after it: a graceful shutdown first closes the connections (the listener's quiescing), then
/// lets the work in flight finish here.
package final class SyncWorkQueue: Service, Sendable {
    package typealias Job = @Sendable () async -> Void

    package static let shards = 512

    private let queues: [(jobs: AsyncStream<Job>, continuation: AsyncStream<Job>.Continuation)]
    private let next = Atomic<Int>(0)

    package init() {
        queues = (0..<Self.shards).map { _ in
            let (jobs, continuation) = AsyncStream<Job>.makeStream(bufferingPolicy: .unbounded)
            return (jobs, continuation)
        }
    }

    /// Runs `job` in a task of its own. Once the queue has ended (shutdown), nothing runs: the
    /// connections it would serve are closed.
    package func submit(_ job: @escaping Job) {
        let shard = next.wrappingAdd(1, ordering: .relaxed).oldValue % Self.shards
        queues[shard].continuation.yield(job)
    }

    package func run() async {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { shards in
                for queue in queues {
                    shards.addTask {
                        await withDiscardingTaskGroup { group in
                            for await job in queue.jobs {
                                group.addTask { await job() }
                            }
                        }
                    }
                }
            }
        } onGracefulShutdown: { [queues] in
            for queue in queues { queue.continuation.finish() }
        }
    }
}
