import Testing
import TetherProtocol

/// The work runs in a task of its own, which has ended when its result is back; its value and
/// its error come back as they were; a cancelled caller's work sees the cancellation.
@Suite struct ShortLivedTaskTests {
    struct Refusal: Error, Equatable {}

    private static func currentTask() -> Int? { withUnsafeCurrentTask { $0?.hashValue } }

    @Test func theWorkRunsInAChildTaskAndItsValueComesBack() async {
        let caller = Self.currentTask()
        let worker = await ShortLivedTask.run { Self.currentTask() }
        #expect(caller != nil && worker != nil && caller != worker)
        #expect(await ShortLivedTask.run { 42 } == 42)
    }

    @Test func anErrorComesBackAsItWasThrown() async {
        await #expect(throws: Refusal.self) {
            try await ShortLivedTask.run { () async throws -> Int in throw Refusal() }
        }
        let value = try? await ShortLivedTask.run { () async throws -> Int in 7 }
        #expect(value == 7)
    }

    @Test func aCancelledCallersWorkIsCancelled() async {
        let cancelled = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await ShortLivedTask.run {
                    try? await Task.sleep(for: .seconds(60))
                    return Task.isCancelled
                }
            }
            group.cancelAll()
            return await group.next() ?? false
        }
        #expect(cancelled)
    }
}
