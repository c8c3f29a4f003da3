import TetherProtocol

/// Fires once, when a connection has ended; any number of tasks wait for it (a waiter that is
/// cancelled returns at once), so nobody polls `isClosed`.
struct ConnectionEndSignal: Sendable {
    private let ended = AwaitableValue(false)

    func fire() { ended.update { $0 = true } }

    func wait() async { await ended.wait { $0 } }
}
