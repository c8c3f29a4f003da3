import TetherProtocol

/// Wakes whoever waits (a partition sleeping through a backoff, waiting while paused or for an
/// operator). Unlike an `AsyncStream`, cancelling a waiter does not end the signal for later
/// waits. A signal wakes every current waiter; with nobody waiting it is kept for the next wait.
struct WakeSignal: Sendable {
    private struct State: Sendable {
        var generation: UInt64 = 0
        var waiting = 0
        var pending = false
    }

    private let state = AwaitableValue(State())

    func signal() {
        state.update { state in
            state.generation &+= 1
            if state.waiting == 0 { state.pending = true }
        }
    }

    /// Returns at the next signal (or a pending one), or when the task is cancelled.
    func wait() async {
        var seen: UInt64 = 0
        state.update { state in
            seen = state.generation
            state.waiting += 1
        }
        let start = seen
        await state.wait { state in
            if state.generation != start { return true }
            guard state.pending else { return false }
            state.pending = false
            return true
        }
        state.update { $0.waiting -= 1 }
    }

    /// Sleeps for `delay`, or less when signalled or cancelled.
    func sleep(for delay: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: delay) }  // cancelled: the sleep ends early, as it may
            group.addTask { await self.wait() }
            await group.next()
            group.cancelAll()
        }
    }
}
