import Foundation
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// Subscriptions served through the filter index (`[subscriptions] queryable`), in process: a
/// new store takes exactly its rows of a state read by candidates, and a filter no queryable
/// column serves over a table larger than `max_unindexed_rows` is refused (227) before anything
/// is registered.
extension SessionStreamerSubscriptionsTests {
    @Test func queryableColumnsServeStatesAndAnUnservedFilterOverTheBoundIs227() async throws {
        try await InProcessSync.run(maxUnindexedRows: 1000) { sync, client in
            // More rows than one chunk: the state is read through a snapshot, by candidates.
            _ = try await write(sync.storage, (1...3000).map { (Int64($0), "s\($0 % 10)") })
            _ = try await sync.storage.reconcileFilterIndex(FilterIndexColumns([QueryableColumn(table: "t", column: "a")]))
            try await client.sync { socket in
                try await socket.hello()
                let (_, rows, _) = try await bootstrap(socket, 1, wanted: Self.set("a = 's3'"))
                #expect(rows.count == 300 && rows.allSatisfy { $0.fields["a"] == .text("s3") })
                let (_, some, _) = try await bootstrap(socket, 2, wanted: Self.set("a IN ('s1', 's2') AND id <= 100"))
                let expected: [Int64] = Array(1...100).filter { $0 % 10 == 1 || $0 % 10 == 2 }
                #expect(Set(some.map(\.key)) == Set(expected.map(RowKey.integer)))
                for (session, filter) in [(SessionID(3), "id > 5"), (4, "a != 's1'"), (5, "a = 's1' OR a IS NULL")] {
                    try await socket.send(.bind(Self.bind(session, wanted: Self.set(filter))))
                    let error = try await socket.next("the refusal") { if case .error(let e) = $0, e.session == session { e.error } else { nil } }
                    #expect(error.code == .badQuery && error.message.contains("too costly") && error.message.contains("on t"), "\(filter): \(error)")
                }
            }
        }
    }
}
