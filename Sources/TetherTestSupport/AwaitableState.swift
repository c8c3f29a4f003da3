import Synchronization

/// State that callbacks (pipe readers, socket readers, a manual clock) update and tests await
/// without sleeping: ``wait(timeout:until:)`` suspends until a predicate over the state holds,
/// or the timeout passes.
package final class AwaitableState<State: Sendable>: Sendable {
    private struct Waiter: Sendable {
        var predicate: @Sendable (State) -> Bool
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct Storage: Sendable {
        var state: State
        var waiters: [UInt64: Waiter] = [:]
        /// Waiters that timed out or were cancelled before they were registered.
        var expired: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let storage: Mutex<Storage>

    package init(_ initial: State) {
        storage = Mutex(Storage(state: initial))
    }

    /// A copy of the current state.
    package var value: State { storage.withLock { $0.state } }

    /// Reads the state under the lock.
    package func read<T>(_ body: (State) throws -> T) rethrows -> T {
        try storage.withLock { try body($0.state) }
    }

    /// Changes the state, then wakes every waiter whose predicate now holds.
    @discardableResult
    package func update<T>(_ body: (inout State) throws -> T) rethrows -> T {
        let (result, ready) = try storage.withLock { storage -> (T, [CheckedContinuation<Bool, Never>]) in
            let result = try body(&storage.state)
            var ready: [CheckedContinuation<Bool, Never>] = []
            for (id, waiter) in storage.waiters where waiter.predicate(storage.state) {
                ready.append(waiter.continuation)
                storage.waiters[id] = nil
            }
            return (result, ready)
        }
        for continuation in ready { continuation.resume(returning: true) }
        return result
    }

    /// Suspends until `predicate` holds for the state (`true`) or `timeout` passes (`false`).
    /// Cancellation of the calling task ends the wait with `false`.
    package func wait(timeout: Duration, until predicate: @escaping @Sendable (State) -> Bool) async -> Bool {
        let id = storage.withLock { storage -> UInt64 in
            storage.nextID += 1
            return storage.nextID
        }
        let satisfied = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    self.register(id: id, predicate: predicate, continuation: continuation)
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)  // cancelled: the predicate was met first
                self.expire(id: id)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        // Both children have finished: forget the id.
        storage.withLock { _ = $0.expired.remove(id) }
        return satisfied
    }

    private func register(
        id: UInt64, predicate: @escaping @Sendable (State) -> Bool, continuation: CheckedContinuation<Bool, Never>
    ) {
        let immediate = storage.withLock { storage -> Bool? in
            if storage.expired.remove(id) != nil { return false }
            if predicate(storage.state) { return true }
            storage.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
            return nil
        }
        if let immediate { continuation.resume(returning: immediate) }
    }

    private func expire(id: UInt64) {
        let waiter = storage.withLock { storage -> Waiter? in
            if let waiter = storage.waiters.removeValue(forKey: id) { return waiter }
            storage.expired.insert(id)
            return nil
        }
        waiter?.continuation.resume(returning: false)
    }
}
