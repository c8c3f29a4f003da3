import Testing
import TetherTestSupport
@testable import TetherServer

/// The bound on state downloads read at once on PostgreSQL: downloads beyond it wait, first
/// come first served, and a session that ends while waiting leaves the queue.
@Suite struct DownloadSlotsTests {
    @Test func slotsAreTakenAtOnceWhileSomeAreFree() async throws {
        let slots = DownloadSlots(limit: 2)
        try await slots.acquire()
        try await slots.acquire()
        #expect(slots.inUse == 2 && slots.waitingCount == 0)
        slots.release()
        slots.release()
        #expect(slots.inUse == 0)
    }

    @Test func downloadsBeyondTheLimitWaitAndStartInArrivalOrder() async throws {
        let slots = DownloadSlots(limit: 1)
        try await slots.acquire()
        let started = AwaitableState<[Int]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 1...3 {
                group.addTask {
                    try await slots.acquire()
                    started.update { $0.append(index) }
                }
                // Queued one after the other, so the arrival order is known.
                try await eventually("waiter \(index) queued") { slots.waitingCount == index }
            }
            #expect(started.value.isEmpty, "a download started while every slot was taken")
            for count in 1...3 {
                slots.release()
                #expect(await started.wait(timeout: TestDeadline.standard) { $0.count == count }, "\(count) started")
                #expect(slots.inUse == 1, "a released slot went to a waiter, not back to the free ones")
            }
            try await group.waitForAll()
        }
        #expect(started.value == [1, 2, 3])
        slots.release()
        #expect(slots.inUse == 0 && slots.waitingCount == 0)
    }

    @Test func aWaiterWhoseSessionEndsLeavesTheQueue() async throws {
        let slots = DownloadSlots(limit: 1)
        try await slots.acquire()
        let outcome = AwaitableState<String?>(nil)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await slots.acquire()
                    outcome.update { $0 = "acquired" }
                } catch {
                    outcome.update { $0 = error is CancellationError ? "cancelled" : "\(error)" }
                }
            }
            try? await eventually("queued") { slots.waitingCount == 1 }
            group.cancelAll()
        }
        #expect(outcome.value == "cancelled")
        #expect(slots.waitingCount == 0)
        // Its place is not kept: the slot goes back to the free ones.
        slots.release()
        #expect(slots.inUse == 0)
        try await slots.acquire()
        #expect(slots.inUse == 1)
        slots.release()
    }

    @Test func aCancelledTaskDoesNotTakeASlot() async throws {
        let slots = DownloadSlots(limit: 1)
        let refused = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                withUnsafeCurrentTask { $0?.cancel() }
                do {
                    try await slots.acquire()
                    return false
                } catch {
                    return error is CancellationError
                }
            }
            return await group.next() ?? false
        }
        #expect(refused)
        #expect(slots.inUse == 0)
    }
}
