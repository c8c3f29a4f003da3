import Foundation
import Testing
import TetherSyncClient
import TetherProtocol

/// Flow control on the real server (protocol 2, docs/protocol.md "Flow control"): a session
/// gets at most its window of state or download messages until the client grants more; a
/// session that does not read holds back only itself; a protocol-1 client is sent everything.
@Suite struct FlowControlTests {
    /// About 4 MiB of state for `store-17`: 64 rows with a 64 KiB note each, in several chunks.
    static func fill(_ server: ServerProcess) async throws {
        try await withConnection(server, deadline: .seconds(60)) { connection in
            let writer = TestDevice(partition: "store-17")
            try await writer.bind(on: connection)
            for row in 0..<64 {
                writer.write(RowChange(table: "orders", key: .text("r\(row)"), kind: .insert, fields: [
                    "customer": .text("c\(row)"), "total": .real(Double(row)), "note": .text(String(repeating: "x", count: 64 << 10)),
                ]))
            }
            try await writer.upload()
            try await writer.syncUntilCaughtUp()
        }
    }

    static func newDevice(_ session: SessionID, _ partition: String = "store-17") -> BindRequest {
        BindRequest(session: session, partition: partition, token: ServerProcess.tokens["pos-17"]!, identity: nil)
    }

    /// The next message, or nil when none arrives within `wait` (the connection is then not
    /// used again: the read is cancelled).
    static func receive(_ raw: RawConnection, within wait: Duration) async throws -> ServerMessage? {
        try await withThrowingTaskGroup(of: ServerMessage?.self) { group in
            group.addTask { try await raw.receive() }
            group.addTask {
                try await Task.sleep(for: wait)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    static func chunk(of session: SessionID) -> (ServerMessage) -> StateChunk? {
        { message in if case .state(let chunk) = message, chunk.session == session { chunk } else { nil } }
    }

    @Test func aNewStoreGetsItsWindowThenWaitsForCredit() async throws {
        try await withServer { server in
            try await Self.fill(server)
            try await withRawConnection(server) { raw in
                try await raw.send(helloMessage)
                try await raw.send(.bind(Self.newDevice(1)))
                _ = try await raw.receive { if case .bound(let reply) = $0 { reply } else { nil } }
                for _ in 0..<ProtocolLimits.initialSendWindow {
                    let chunk = try await raw.receive(Self.chunk(of: 1))
                    #expect(!chunk.isLast, "the state is larger than the window")
                }
                let more = try await Self.receive(raw, within: .seconds(1))
                #expect(more == nil, "nothing beyond the window without credit: \(more.map(\.name) ?? "")")
            }
        }
    }

    @Test func creditReleasesTheRestAndAStalledSessionDoesNotHoldBackAnother() async throws {
        try await withServer { server in
            try await Self.fill(server)
            try await withRawConnection(server) { raw in
                try await raw.send(helloMessage)
                try await raw.send(.bind(Self.newDevice(1)))
                var rows = 0
                for _ in 0..<ProtocolLimits.initialSendWindow { rows += try await raw.receive(Self.chunk(of: 1)).rows.changeset.changes.count }
                // Session 1 is stalled (no credit). Session 2, same connection, another partition:
                // bound, and a write by another device reaches it.
                try await raw.send(.bind(Self.newDevice(2, "store-18")))
                let second = try await raw.receive { if case .bound(let reply) = $0, reply.session == 2 { reply } else { nil } }
                #expect(second.stateFollows)
                _ = try await raw.receive(Self.chunk(of: 2))  // its (empty) state, within its own window
                try await withConnection(server) { connection in
                    let writer = TestDevice(partition: "store-18")
                    try await writer.bind(on: connection)
                    writer.write(RowChange(table: "orders", key: .text("s1"), kind: .insert, fields: ["customer": .text("c"), "total": .real(1)]))
                    try await writer.upload()
                    try await writer.syncUntilCaughtUp()
                }
                let download = try await raw.receive { if case .download(let d) = $0, d.session == 2 { d } else { nil } }
                #expect(download.entries.flatMap(\.changeset.changes).map(\.key) == [.text("s1")])
                // Credit for session 1: the rest of its state, to the last chunk.
                try await raw.send(.credit(1, messages: ProtocolLimits.maxCreditGrant))
                while true {
                    let chunk = try await raw.receive(Self.chunk(of: 1))
                    rows += chunk.rows.changeset.changes.count
                    if chunk.isLast { break }
                }
                #expect(rows == 64)
            }
        }
    }

    @Test func creditForASessionThatIsNotBoundBreaksTheProtocol() async throws {
        try await withServer { server in
            try await withRawConnection(server) { raw in
                try await raw.send(helloMessage)
                try await raw.send(.credit(9, messages: 1))
                let error = try await raw.connectionError()
                #expect(error.code == .badMessageOrder)
            }
        }
    }
}
