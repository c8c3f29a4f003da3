import Foundation
import Glibc
import Synchronization
import TetherControl

/// Follows the agent's events on a thread of its own (the socket calls block), delivering them
/// into an `AsyncThrowingStream`, and connects again after the last delivered event whenever
/// the agent stops, restarts or is not running yet (docs/control-protocol.md, "Events, and
/// resuming after a restart"). Stops when the stream's consumer goes away.
struct EventFollower: Sendable {
    let client: TetherClient
    let after: UInt64?
    let partition: String?

    /// The first wait before connecting again, doubled up to ``longestWait``.
    static let shortestWait: Duration = .milliseconds(250)
    static let longestWait: Duration = .seconds(5)

    func start() -> AsyncThrowingStream<AgentEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: AgentEvent.self, throwing: (any Error).self)
        let stopped = StopFlag()
        continuation.onTermination = { _ in stopped.stop() }
        let thread = Thread { run(continuation, stopped) }
        thread.name = "tether-client-events"
        thread.start()
        return stream
    }

    private func run(_ continuation: AsyncThrowingStream<AgentEvent, any Error>.Continuation, _ stopped: StopFlag) {
        var last = after
        var wait = Self.shortestWait
        while !stopped.isStopped {
            do throws(TetherClientError) {
                try follow(after: last, stopped) { event in
                    // `dropped` is made for this reader and has no number of its own.
                    if event.seq > 0 { last = event.seq }
                    continuation.yield(event)
                }
                wait = Self.shortestWait  // the agent ended the stream (it stops): connect again
            } catch {
                // Not running (yet): wait, then try again; anything else ends the stream.
                guard error.isTransient else {
                    continuation.finish(throwing: error)
                    return
                }
            }
            guard !stopped.wait(wait) else { break }
            wait = min(wait * 2, Self.longestWait)
        }
        continuation.finish()
    }

    /// One connection: the request, its answer, then every event line until the agent closes
    /// the stream or the consumer goes away.
    private func follow(after: UInt64?, _ stopped: StopFlag, _ deliver: (AgentEvent) -> Void) throws(TetherClientError) {
        let request = ControlRequest(command: .events, partition: partition, follow: true, after: after, protocol: ControlProtocol.version)
        let answer: ControlResponse
        do {
            answer = try ControlClient(socketPath: client.socketPath, timeout: client.timeout).stream(
                request, stopping: { stopped.isStopped }
            ) { line in
                // A kind this release does not know (a newer agent's) is skipped.
                if let event = try? JSONDecoder().decode(AgentEvent.self, from: Data(line.utf8)) { deliver(event) }
                return !stopped.isStopped
            }
        } catch {
            throw .transport(error, socketPath: client.socketPath)
        }
        guard answer.ok else { throw .refusal(answer) }
    }
}

/// Set once the stream's consumer went away; the follower's waits end at once.
final class StopFlag: Sendable {
    private let flag = Mutex(false)

    var isStopped: Bool { flag.withLock { $0 } }

    func stop() { flag.withLock { $0 = true } }

    /// Sleeps `duration` in short steps; true when stopped meanwhile.
    func wait(_ duration: Duration) -> Bool {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            if isStopped { return true }
            usleep(50_000)
        }
        return isStopped
    }
}
