import Foundation
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherStore

@Suite struct PartitionStoreMemoryTests {
    @Test func releasingMemoryWhileIdleLosesNoNotices() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-store")
        defer { dir.remove() }
        let store = try await makeStore(dir)
        let notifier = try StoreChangeNotifier(path: store.path)
        let recorder = NoticeRecorder()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { for await notice in notifier { recorder.record(notice) } }
            #expect(try await sqlite3(store.path, "INSERT INTO items VALUES (1, 'x', NULL)").status == 0)
            try await eventually("first commit noticed", timeout: .seconds(30)) { recorder.count == 1 }
            #expect(try await store.pendingChangeCount() == 1)
            let uses = store.uses
            store.releaseMemory()
            #expect(store.uses == uses, "releasing is not a use")
            // Commits while released, from another process and from the agent itself.
            #expect(try await sqlite3(store.path, "INSERT INTO items VALUES (2, 'y', NULL)").status == 0)
            try await eventually("commit after the release noticed", timeout: .seconds(30)) { recorder.count == 2 }
            store.releaseMemory()
            try await store.apply([serverEntry(1, [.insert("items", .integer(3), ["name": .text("z")])])])
            try await eventually("agent's apply after a release noticed", timeout: .seconds(30)) { recorder.count == 3 }
            // The store reopens what it released.
            #expect(try await store.pendingChangeCount() == 2)
            #expect(store.uses > uses)
            group.cancelAll()
        }
        try store.close()
    }
}
