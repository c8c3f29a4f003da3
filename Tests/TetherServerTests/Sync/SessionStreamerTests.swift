import Foundation
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// ``SessionStreamer`` in process (``InProcessSync``): a new store's state in chunks, another
/// session's upload as a download with its changes, and a known store's history after the
/// version it has.
@Suite(.timeLimit(.minutes(1))) struct SessionStreamerTests {
    let partition = PartitionName("store-1")!

    /// Writes `rows` rows into the partition as one upload of another store; returns the version.
    func fill(_ storage: SQLiteServerStorage, rows: Int64) async throws -> ServerVersion {
        let (writer, _) = try await storage.registerClientFile(in: partition, now: Date())
        let changes: [RowChange] = (1...rows).map { .insert("t", .integer($0), ["a": .text("row \($0)")]) }
        let outcome = try await storage.integrate(
            [UploadChangeset(firstSeq: 1, lastSeq: 1, changeset: Changeset(changes))], from: writer.id, into: partition, now: Date())
        return outcome.head.latest
    }

    @Test func aNewStoreGetsThePartitionsStateUpToItsLastChunk() async throws {
        try await InProcessSync.run { sync, client in
            let version = try await fill(sync.storage, rows: 3)
            try await client.sync { socket in
                try await socket.hello()
                try await socket.send(.bind(InProcessSync.newStore(1)))
                var last: StateChunk
                repeat {
                    last = try await socket.next("a state chunk") { if case .state(let chunk) = $0, chunk.session == 1 { chunk } else { nil } }
                } while !last.isLast
                #expect(last.serverVersion == version)
                #expect(last.progress.rowsDone == 3 && last.progress.rowsTotal == 3)
            }
        }
    }

    /// A partition at version 0 holds no rows: a new store of it gets one empty last chunk at
    /// that version (without a read of the state), and what is committed later as history.
    @Test func aNewStoreOfAPartitionWithoutVersionsGetsOneEmptyChunk() async throws {
        try await InProcessSync.run { _, client in
            try await client.sync { socket in
                try await socket.hello()
                try await socket.send(.bind(InProcessSync.newStore(1)))
                let chunk = try await socket.next("a state chunk") { if case .state(let chunk) = $0, chunk.session == 1 { chunk } else { nil } }
                #expect(chunk.isLast)
                #expect(chunk.serverVersion.version == 0)
                #expect(chunk.rows.count == 0 && chunk.progress == .none)
                _ = try await socket.bindNewStore(2)
                try await socket.send(.upload(Upload(session: 2, changesets: [InProcessSync.changeset(1, 1, id: 7, a: "seven")])))
                let download = try await socket.next("session 2's upload as history") {
                    if case .download(let d) = $0, d.session == 1, !d.entries.isEmpty { d } else { nil }
                }
                #expect(download.entries.flatMap(\.changes.changeset.changes) == [.insert("t", .integer(7), ["a": .text("seven")])])
            }
        }
    }

    @Test func anotherSessionsUploadReachesABoundSessionWithItsChanges() async throws {
        try await InProcessSync.run { _, client in
            try await client.sync { socket in
                try await socket.hello()
                _ = try await socket.bindNewStore(1)
                _ = try await socket.bindNewStore(2)
                try await socket.send(.upload(Upload(session: 1, changesets: [InProcessSync.changeset(1, 1, id: 7, a: "seven")])))
                let download = try await socket.next("session 2's download") {
                    if case .download(let d) = $0, d.session == 2, !d.entries.isEmpty { d } else { nil }
                }
                let changes = download.entries.flatMap(\.changes.changeset.changes)
                #expect(changes == [.insert("t", .integer(7), ["a": .text("seven")])])
                #expect(download.entries.allSatisfy { $0.integratedClientSeq == 0 }, "session 2 uploaded nothing")
            }
        }
    }

    @Test func aKnownStoreGetsOnlyTheHistoryAfterItsVersion() async throws {
        try await InProcessSync.run { sync, client in
            let (store, _) = try await sync.storage.registerClientFile(in: partition, now: Date())
            let first = try await fill(sync.storage, rows: 1)
            let second = try await fill(sync.storage, rows: 2)
            try await client.sync { socket in
                try await socket.hello()
                try await socket.send(.bind(BindRequest(
                    session: 1, partition: partition.rawValue, token: InProcessSync.token, identity: store, lastServerVersion: first,
                    schemaVersion: 1)))
                let reply = try await socket.next("the bind's reply") { if case .bound(let reply) = $0 { reply } else { nil } }
                #expect(!reply.stateFollows && reply.latestServerVersion == second)
                let download = try await socket.next("the download") { if case .download(let d) = $0, d.session == 1 { d } else { nil } }
                #expect(download.entries.map(\.serverVersion) == [second])
            }
        }
    }
}
