import Synchronization

/// A value tasks can wait on: ``wait(until:)`` returns once a condition on the value holds —
/// checked when the wait starts and after every ``update(_:)`` — or when the waiting task is
/// cancelled. The condition may change the value (consume a signal). The one waiting primitive
/// of the runtime: the connection's end, a partition's status changes and wake signal in the
/// agent, and a session's flow-control window on the server are built on it. (Here because
/// the client, the agent and the server all depend on this module; it does no I/O.)
package final class AwaitableValue<Value: Sendable>: Sendable {
    package typealias Condition = @Sendable (inout Value) -> Bool

    private struct Waiter {
        let condition: Condition
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var value: Value
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    package init(_ value: Value) {
        state = Mutex(State(value: value))
    }

    package var value: Value { state.withLock { $0.value } }

    /// Changes the value, then resumes every waiter whose condition now holds.
    package func update(_ change: (inout Value) -> Void) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            change(&state.value)
            var ready: [CheckedContinuation<Void, Never>] = []
            for id in state.waiters.keys.sorted() {
                guard let waiter = state.waiters[id], waiter.condition(&state.value) else { continue }
                state.waiters[id] = nil
                ready.append(waiter.continuation)
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// Returns once `condition` holds, or when the task is cancelled.
    package func wait(until condition: @escaping Condition) async {
        let id = state.withLock { state -> UInt64 in
            state.nextID &+= 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if Task.isCancelled || condition(&state.value) { return true }
                    state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume()
        }
    }

    /// Like ``wait(until:)``, giving up after `timeout`.
    package func wait(until condition: @escaping Condition, timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }  // cancelled: the condition was met first
            group.addTask { await self.wait(until: condition) }
            await group.next()
            group.cancelAll()
        }
    }
}
