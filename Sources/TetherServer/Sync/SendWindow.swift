import Synchronization
import TetherProtocol

/// Flow control of one session (protocol 2, docs/protocol.md "Flow control"): how many state or
/// download messages its streamer may still send before the client grants more with `credit`.
/// A session that does not read stops its own streamer only: the connection and its other
/// sessions go on. Unlimited on a protocol-1 connection.
final class SendWindow: Sendable {
    private struct State {
        var available: Int?
        var closed = false
        var waiter: CheckedContinuation<Bool, Never>?
    }

    private let state: Mutex<State>

    /// `initial`: messages allowed before the first grant; nil: no flow control.
    init(initial: Int?) {
        state = Mutex(State(available: initial))
    }

    /// The client consumed messages: `messages` more may be sent.
    func grant(_ messages: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let available = state.available else { return nil }
            state.available = available + messages
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            state.available = available + messages - 1
            return waiter
        }
        waiter?.resume(returning: true)
    }

    /// The session ended: a waiting streamer stops.
    func close() {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            state.closed = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: false)
    }

    /// Takes one message's worth of the window, waiting while none is left. False when the
    /// session ended (or the task was cancelled) first.
    func take() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now = state.withLock { state -> Bool? in
                    if state.closed || Task.isCancelled { return false }
                    guard let available = state.available else { return true }
                    if available > 0 {
                        state.available = available - 1
                        return true
                    }
                    state.waiter = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            close()
        }
    }

    /// Messages that may still be sent (nil: unlimited), for tests.
    var available: Int? { state.withLock { $0.available } }
}
