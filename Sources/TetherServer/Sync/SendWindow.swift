import TetherProtocol

/// Flow control of one session (protocol 2, docs/protocol.md "Flow control"): how many state or
/// download messages its streamer may still send before the client grants more with `credit`.
/// A session that does not read stops its own streamer only: the connection and its other
/// sessions go on. Unlimited on a protocol-1 connection.
struct SendWindow: Sendable {
    private struct State: Sendable {
        /// Messages that may still be sent; nil: no flow control.
        var available: Int?
        var closed = false
    }

    private let state: AwaitableValue<State>

    /// `initial`: messages allowed before the first grant; nil: no flow control.
    init(initial: Int?) {
        state = AwaitableValue(State(available: initial))
    }

    /// The client consumed messages: `messages` more may be sent.
    func grant(_ messages: Int) {
        state.update { state in state.available = state.available.map { $0 + messages } }
    }

    /// The session ended: a waiting streamer stops.
    func close() { state.update { $0.closed = true } }

    /// Takes one message's worth of the window, waiting while none is left. False when the
    /// session ended (or the task was cancelled) first.
    func take() async -> Bool {
        await state.wait { state in
            if state.closed { return true }
            guard let available = state.available else { return true }
            guard available > 0 else { return false }
            state.available = available - 1
            return true
        }
        return !Task.isCancelled && !state.value.closed
    }

    /// Messages that may still be sent (nil: unlimited), for tests.
    var available: Int? { state.value.available }
}
