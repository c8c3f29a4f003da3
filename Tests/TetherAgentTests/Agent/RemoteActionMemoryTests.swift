import Testing
import TetherProtocol
@testable import TetherAgent

/// The remote actions answered in this run: an action the server sends again is answered as
/// before (issue 49).
@Suite struct RemoteActionMemoryTests {
    private func answer(_ id: Int64, _ outcome: RemoteActionResult.Outcome = .done) -> RemoteActionResult {
        RemoteActionResult(id: id, outcome: outcome, message: "answer \(id)")
    }

    @Test func anAnsweredIdIsRemembered() {
        var memory = RemoteActionMemory()
        #expect(memory.result(for: 1) == nil)
        memory.remember(answer(1))
        memory.remember(answer(2, .refused))
        #expect(memory.result(for: 1) == answer(1))
        #expect(memory.result(for: 2) == answer(2, .refused))
        #expect(memory.result(for: 3) == nil)
        #expect(memory.count == 2)
    }

    @Test func theOldestAreForgottenPastTheCapacity() {
        var memory = RemoteActionMemory(capacity: 3)
        for id in Int64(1)...5 { memory.remember(answer(id)) }
        #expect(memory.count == 3)
        #expect(memory.result(for: 1) == nil && memory.result(for: 2) == nil)
        #expect(memory.result(for: 3) == answer(3) && memory.result(for: 5) == answer(5))
        #expect(RemoteActionMemory.capacity == 256)
    }

    @Test func rememberingAnIdAgainKeepsItsPlace() {
        var memory = RemoteActionMemory(capacity: 2)
        memory.remember(answer(1))
        memory.remember(answer(2))
        memory.remember(RemoteActionResult(id: 1, outcome: .failed, message: "again"))
        #expect(memory.count == 2)
        #expect(memory.result(for: 1)?.outcome == .failed)
        memory.remember(answer(3))
        #expect(memory.result(for: 1) == nil, "1 is still the oldest")
        #expect(memory.result(for: 2) != nil && memory.result(for: 3) != nil)
    }
}
