import Foundation
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// Subscriptions a grant imposes (`[[grant.subscription]]`, issue 51) in process
/// (``InProcessSync``, table `t(id, a)`): a device without subscriptions holds only the rows the
/// grant's filter matches, as state and history; a write outside them is a compensating write;
/// its own set is narrowed by the grant's; an agent without subscriptions is refused; and a
/// changed imposition moves exactly the difference at the next bind, named by the token the
/// store was given.
@Suite(.timeLimit(.minutes(1))) struct SessionStreamerGrantSubscriptionsTests {
    let partition = PartitionName("store-1")!
    static let onlyX = "[[grant.subscription]]\ntable = \"t\"\nwhere = \"a = 'x'\""

    static func bind(
        _ session: SessionID, held: SubscriptionSet? = nil, token: UInt64 = 0, wanted: SubscriptionSet? = nil,
        identity: ClientFileIdentity? = nil, version: ServerVersion = .none
    ) -> BindRequest {
        BindRequest(
            session: session, partition: "store-1", token: InProcessSync.token, identity: identity, lastServerVersion: version,
            schemaVersion: 1, lineage: SessionStreamerSubscriptionsTests.lineage,
            subscriptions: SubscriptionRequest(held: held, heldToken: token, wanted: wanted))
    }

    func write(_ storage: SQLiteServerStorage, _ rows: [(Int64, String?)], kind: RowChange.Kind = .insert) async throws -> ServerVersion {
        try await SessionStreamerSubscriptionsTests().write(storage, rows, kind: kind)
    }

    /// A new store's state to its last chunk: the reply, the rows and the version.
    func bootstrap(_ socket: SyncSocket, _ session: SessionID, wanted: SubscriptionSet? = nil) async throws -> (BindReply, [RowChange], ServerVersion) {
        try await socket.send(.bind(Self.bind(session, wanted: wanted)))
        let reply = try await socket.next("the bind's reply") { if case .bound(let r) = $0, r.session == session { r } else { nil } }
        var rows: [RowChange] = []
        while true {
            let chunk = try await socket.next("a state chunk") { if case .state(let c) = $0, c.session == session { c } else { nil } }
            rows += chunk.rows.changeset.changes
            if chunk.isLast { return (reply, rows, chunk.serverVersion) }
        }
    }

    /// A subscription change to its last chunk: the changes and that chunk.
    func subscriptionChange(_ socket: SyncSocket) async throws -> ([RowChange], SubscriptionChunk) {
        var changes: [RowChange] = []
        var last: SubscriptionChunk
        repeat {
            last = try await socket.next("a subscription chunk") { if case .subscriptionChunk(let c) = $0 { c } else { nil } }
            changes += last.changes.changeset.changes
        } while !last.isLast
        return (changes, last)
    }

    @Test func aDeviceWithoutSubscriptionsHoldsOnlyTheRowsTheGrantAllows() async throws {
        try await InProcessSync.run(grantRules: Self.onlyX) { sync, client in
            _ = try await write(sync.storage, [(1, "x"), (2, "y"), (3, "x"), (4, nil)])
            try await client.sync { socket in
                try await socket.hello()
                let (reply, rows, _) = try await bootstrap(socket, 1)
                #expect(rows.map(\.key) == [.integer(1), .integer(3)])
                #expect(!reply.fileFollows)
                // Row 2 starts matching, row 1 stops, row 5 is new and outside.
                let version = try await write(sync.storage, [(2, "x"), (1, "z")], kind: .update)
                _ = try await write(sync.storage, [(5, "q")])
                await sync.service.hub.publish(partition)
                var changes: [RowChange] = []
                var last = ServerVersion.none
                while last.version < version.version + 1 {
                    let download = try await socket.next("a download") { if case .download(let d) = $0, d.session == 1 { d } else { nil } }
                    changes += download.entries.flatMap(\.changes.changeset.changes)
                    last = download.entries.last?.serverVersion ?? last
                }
                #expect(changes == [.insert("t", .integer(2), ["a": .text("x")]), .delete("t", .integer(1))])
            }
        }
    }

    @Test func aWriteOutsideTheGrantsSubscriptionIsACompensatingWrite() async throws {
        try await InProcessSync.run(grantRules: Self.onlyX) { sync, client in
            _ = try await write(sync.storage, [(1, "x"), (2, "y")])
            try await client.sync { socket in
                try await socket.hello()
                _ = try await bootstrap(socket, 1)
                let upload = UploadChangeset(firstSeq: 1, lastSeq: 3, changeset: Changeset([
                    .insert("t", .integer(3), ["a": .text("x")]), .insert("t", .integer(4), ["a": .text("y")]),
                    .update("t", .integer(1), ["a": .text("y")]),
                ]))
                try await socket.send(.upload(Upload(session: 1, changesets: [upload])))
                let notice = try await socket.next("the compensating writes") { if case .compensatingWrites(let w) = $0 { w } else { nil } }
                #expect(notice.writes.map(\.key) == [.integer(4), .integer(1)])
                #expect(notice.writes.allSatisfy { $0.reason == .outsideSubscriptions })
                let ack = try await socket.next("the acknowledgement") {
                    if case .download(let d) = $0, d.session == 1, let e = d.entries.first { e } else { nil }
                }
                #expect(ack.changes.changeset.changes == [
                    .delete("t", .integer(4)), .insert("t", .integer(1), ["a": .text("x")]),
                ], "the new row outside leaves the store; the row moved out is put back as the server has it")
            }
            let state = try await sync.storage.openState(of: partition)
            let rows = try await state.next(maxRows: 100, maxBytes: 1 << 20)
            await state.close()
            #expect(rows.map(\.key) == [.integer(1), .integer(2), .integer(3)])
            #expect(rows.first?.fields == ["a": .text("x")])
        }
    }

    @Test func theDevicesOwnSetIsNarrowedByTheGrants() async throws {
        let rules = "[[grant.subscription]]\ntable = \"t\"\nwhere = \"a = 'x' OR a = 'z'\""
        try await InProcessSync.run(grantRules: rules) { sync, client in
            _ = try await write(sync.storage, [(1, "x"), (2, "y"), (3, "z")])
            try await client.sync { socket in
                try await socket.hello()
                let wanted = try SubscriptionSet([Subscription(table: "t", filter: "a IN ('x', 'y')")])
                let (_, rows, _) = try await bootstrap(socket, 1, wanted: wanted)
                #expect(rows.map(\.key) == [.integer(1)])
            }
        }
    }

    @Test func anAgentWithoutSubscriptionsIsRefusedWhenTheGrantImposesSome() async throws {
        try await InProcessSync.run(grantRules: Self.onlyX) { sync, client in
            try await client.sync { socket in
                try await socket.hello()
                try await socket.send(.bind(InProcessSync.newStore(1)))
                let error = try await socket.next("the refusal") { if case .error(let e) = $0, e.session == 1 { e.error } else { nil } }
                #expect(error.code == .badQuery)
                #expect(error.message.contains("does not support subscriptions"))
                #expect(error.hint.contains("upgrade tetherd"))
            }
            #expect(try await sync.storage.head(of: partition) == nil, "no client file was registered")
        }
    }

    /// Reloads the policy with the grant imposing `filter` on `t`.
    func impose(_ filter: String, on sync: InProcessSync) async throws {
        let grants = try InProcessSync.grants("[[grant.subscription]]\ntable = \"t\"\nwhere = \"\(filter)\"")
        let snapshot = await sync.service.policy.snapshot
        _ = await sync.service.policy.reload(
            users: snapshot.users, adminToken: snapshot.adminToken, configuredGrants: grants, configuredRecovery: true)
    }

    @Test func aChangedImpositionMovesExactlyTheDifferenceNamedByTheStoresToken() async throws {
        try await InProcessSync.run(grantRules: Self.onlyX) { sync, client in
            _ = try await write(sync.storage, [(1, "x"), (2, "y"), (3, "z"), (4, "x")])
            try await client.sync { socket in
                try await socket.hello()
                let (reply, rows, version) = try await bootstrap(socket, 1)
                #expect(rows.map(\.key) == [.integer(1), .integer(4)])
                try await socket.send(.unbind(1))
                _ = try await socket.next("unbound") { if case .unbound(1) = $0 { true } else { nil } }
                // The operator lets the device see 'y' instead: the store took its state under 'x' (token 0).
                try await impose("a = 'y'", on: sync)
                try await socket.send(.bind(Self.bind(1, identity: reply.identity, version: version)))
                let rebound = try await socket.next("the bind's reply") { if case .bound(let r) = $0 { r } else { nil } }
                #expect(!rebound.stateFollows)
                let (first, last) = try await subscriptionChange(socket)
                #expect(Set(first) == [.delete("t", .integer(1)), .delete("t", .integer(4)), .insert("t", .integer(2), ["a": .text("y")])])
                #expect(last.setDigest == 0 && last.scopeToken != 0)
                try await socket.send(.unbind(1))
                _ = try await socket.next("unbound") { if case .unbound(1) = $0 { true } else { nil } }
                // Then 'z': the store names the change it took by its token, so only 'y' leaves.
                try await impose("a = 'z'", on: sync)
                try await socket.send(.bind(Self.bind(1, token: last.scopeToken, identity: reply.identity, version: version)))
                _ = try await socket.next("the bind's reply") { if case .bound(let r) = $0 { r } else { nil } }
                let (second, _) = try await subscriptionChange(socket)
                #expect(Set(second) == [.delete("t", .integer(2)), .insert("t", .integer(3), ["a": .text("z")])])
            }
        }
    }
}
