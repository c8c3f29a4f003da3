import Foundation
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// ``ServerConnection`` in process (``InProcessSync``): a bind and its reply, an upload
/// committed and acknowledged, a refused bind that leaves the connection up, and work for a
/// session that is not bound.
@Suite(.timeLimit(.minutes(1))) struct ServerConnectionTests {
    @Test func aNewStoreIsBoundWithAFreshIdentityAndItsStateFollows() async throws {
        try await InProcessSync.run { sync, client in
            try await client.sync { socket in
                try await socket.hello()
                let reply = try await socket.bindNewStore(1)
                #expect(reply.isNewIdentity && reply.stateFollows && !reply.fileFollows)
                #expect(reply.access == .readwrite)
                #expect(reply.schema.version == 1)
                let record = try await sync.storage.clientFile(reply.identity.id, of: PartitionName("store-1")!)
                #expect(record?.identity == reply.identity)
            }
        }
    }

    @Test func anUploadIsCommittedAndAcknowledgedWithoutItsChanges() async throws {
        try await InProcessSync.run { sync, client in
            try await client.sync { socket in
                try await socket.hello()
                _ = try await socket.bindNewStore(1)
                try await socket.send(.upload(Upload(session: 1, changesets: [InProcessSync.changeset(1, 2, id: 1, a: "x")])))
                let download = try await socket.next("the acknowledgement") { if case .download(let d) = $0, d.session == 1 { d } else { nil } }
                let entry = try #require(download.entries.last)
                #expect(entry.integratedClientSeq == 2)
                #expect(entry.changes.changeset.changes.isEmpty, "a store's own changes come back as an acknowledgement only")
                #expect(download.latestServerVersion == entry.serverVersion.version)
                #expect(try await sync.storage.head(of: PartitionName("store-1")!)?.latest.version == entry.serverVersion.version)
            }
        }
    }

    @Test func aBindWithAnUnknownTokenIsRefusedAndTheConnectionStays() async throws {
        try await InProcessSync.run { _, client in
            try await client.sync { socket in
                try await socket.hello()
                try await socket.send(.bind(InProcessSync.newStore(1, token: "not-a-token")))
                let error = try await socket.next("the refusal") { if case .error(let e) = $0, e.session == 1 { e.error } else { nil } }
                #expect(error.code == .badUserAuthentication)
                _ = try await socket.bindNewStore(2)
            }
        }
    }

    @Test func anUploadForASessionThatIsNotBoundIsOutOfOrder() async throws {
        try await InProcessSync.run { _, client in
            try await client.sync { socket in
                try await socket.hello()
                try await socket.send(.upload(Upload(session: 3, changesets: [])))
                let error = try SyncEndpointTests.closingError(try await socket.rest())
                #expect(error.code == .badMessageOrder)
                #expect(error.message.contains("session 3"))
            }
        }
    }
}
