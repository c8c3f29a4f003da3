import Foundation
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// Subscriptions in process (``InProcessSync``, table `t(id, a)`): a new store takes the rows its
/// set holds; history reaches a filtered session as rows entering (whole) and leaving (removed);
/// a write outside the set is a compensating write while the rest integrates; a changed set
/// moves exactly the difference; a set that cannot be served is 227.
@Suite(.timeLimit(.minutes(1))) struct SessionStreamerSubscriptionsTests {
    let partition = PartitionName("store-1")!

    static func set(_ filter: String?) -> SubscriptionSet {
        try! SubscriptionSet([Subscription(table: "t", filter: filter)])
    }

    static let lineage = StoreLineage(uploadSalt: 99, integratedSeq: 0, lastSeq: 0, sent: [])

    static func bind(
        _ session: SessionID, held: SubscriptionSet? = nil, wanted: SubscriptionSet?, identity: ClientFileIdentity? = nil,
        version: ServerVersion = .none, lineage: StoreLineage = lineage
    ) -> BindRequest {
        BindRequest(
            session: session, partition: "store-1", token: InProcessSync.token, identity: identity, lastServerVersion: version,
            schemaVersion: 1, lineage: lineage, subscriptions: SubscriptionRequest(held: held, wanted: wanted))
    }

    /// Writes rows `id → a` as one upload of another store; returns the version.
    func write(_ storage: SQLiteServerStorage, _ rows: [(Int64, String?)], kind: RowChange.Kind = .insert) async throws -> ServerVersion {
        let (writer, _) = try await storage.registerClientFile(in: partition, now: Date())
        let changes = rows.map { RowChange(table: "t", key: .integer($0.0), kind: kind, fields: ["a": $0.1.map { .text($0) } ?? .null]) }
        return try await storage.integrate(
            [UploadChangeset(firstSeq: 1, lastSeq: 1, changeset: Changeset(changes))], from: writer.id, into: partition, now: Date()
        ).head.latest
    }

    /// Reads a new store's state to its last chunk; returns the rows and the version.
    func bootstrap(_ socket: SyncSocket, _ session: SessionID, wanted: SubscriptionSet?) async throws -> (BindReply, [RowChange], ServerVersion) {
        try await socket.send(.bind(Self.bind(session, wanted: wanted)))
        let reply = try await socket.next("the bind's reply") { if case .bound(let r) = $0, r.session == session { r } else { nil } }
        var rows: [RowChange] = []
        while true {
            let chunk = try await socket.next("a state chunk") { if case .state(let c) = $0, c.session == session { c } else { nil } }
            rows += chunk.rows.changeset.changes
            if chunk.isLast { return (reply, rows, chunk.serverVersion) }
        }
    }

    @Test func aNewStoreTakesOnlyTheRowsItsSubscriptionsHold() async throws {
        try await InProcessSync.run { sync, client in
            _ = try await write(sync.storage, [(1, "x"), (2, "y"), (3, "x"), (4, nil)])
            try await client.sync { socket in
                try await socket.hello()
                let (_, rows, _) = try await bootstrap(socket, 1, wanted: Self.set("a = 'x'"))
                #expect(rows.map(\.key) == [.integer(1), .integer(3)])
                let (_, all, _) = try await bootstrap(socket, 2, wanted: nil)
                #expect(all.count == 4, "a store without subscriptions takes the whole partition")
            }
        }
    }

    @Test func historyReachesAFilteredSessionAsRowsEnteringAndLeaving() async throws {
        try await InProcessSync.run { sync, client in
            _ = try await write(sync.storage, [(1, "x"), (2, "y")])
            try await client.sync { socket in
                try await socket.hello()
                _ = try await bootstrap(socket, 1, wanted: Self.set("a = 'x'"))
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

    @Test func aWriteOutsideTheSubscriptionsIsACompensatingWriteAndTheRestIntegrates() async throws {
        try await InProcessSync.run { sync, client in
            _ = try await write(sync.storage, [(1, "x"), (2, "y")])
            try await client.sync { socket in
                try await socket.hello()
                _ = try await bootstrap(socket, 1, wanted: Self.set("a = 'x'"))
                _ = try await bootstrap(socket, 2, wanted: nil)
                // Inside: a new row 3 'x'. Outside: a new row 4 'y', and an update of row 2 (held by nobody here).
                let upload = UploadChangeset(firstSeq: 1, lastSeq: 3, changeset: Changeset([
                    .insert("t", .integer(3), ["a": .text("x")]), .insert("t", .integer(4), ["a": .text("y")]),
                    .update("t", .integer(2), ["a": .text("x")]),
                ]))
                try await socket.send(.upload(Upload(session: 1, changesets: [upload])))
                // Both sessions' messages, in the order they came, until each has its download.
                var received: [ServerMessage] = []
                func downloaded(_ session: SessionID) -> Bool {
                    received.contains { if case .download(let d) = $0, d.session == session, !d.entries.isEmpty { true } else { false } }
                }
                while !(downloaded(1) && downloaded(2)) {
                    guard let message = try await socket.next() else { break }
                    received.append(message)
                }
                let notices = received.compactMap { if case .compensatingWrites(let w) = $0 { w } else { nil } }
                let noticeIndex = received.firstIndex { if case .compensatingWrites = $0 { true } else { false } }
                let ackIndex = received.firstIndex { if case .download(let d) = $0, d.session == 1 { true } else { false } }
                #expect(notices.count == 1)
                let notice = try #require(notices.first)
                #expect(try #require(noticeIndex) < #require(ackIndex), "the notice comes before the entry that reverts")
                #expect(notice.session == 1)
                #expect(notice.writes.map(\.key) == [.integer(4), .integer(2)])
                #expect(notice.writes.allSatisfy { $0.reason == .outsideSubscriptions && $0.table == "t" })
                let ack = try #require(received.compactMap { if case .download(let d) = $0, d.session == 1 { d.entries.first } else { nil } }.first)
                #expect(ack.serverVersion == notice.serverVersion)
                #expect(ack.integratedClientSeq == 3)
                #expect(ack.changes.changeset.changes == [.delete("t", .integer(4)), .delete("t", .integer(2))], "the reverts: neither row is held")
                let other = received.compactMap { if case .download(let d) = $0, d.session == 2 { d } else { nil } }
                #expect(other.flatMap(\.entries).flatMap(\.changes.changeset.changes) == [.insert("t", .integer(3), ["a": .text("x")])])
            }
            let state = try await sync.storage.openState(of: partition)
            let rows = try await state.next(maxRows: 100, maxBytes: 1 << 20)
            await state.close()
            #expect(rows.map(\.key) == [.integer(1), .integer(2), .integer(3)])
            #expect(rows.first { $0.key == .integer(2) }?.fields == ["a": .text("y")], "the refused update was not applied")
        }
    }

    @Test func aChangedSetMovesExactlyTheDifferenceWithoutAReset() async throws {
        try await InProcessSync.run { sync, client in
            _ = try await write(sync.storage, [(1, "x"), (2, "y"), (3, "x"), (4, "y"), (5, "z")])
            try await client.sync { socket in
                try await socket.hello()
                let (reply, _, version) = try await bootstrap(socket, 1, wanted: Self.set("a = 'x'"))
                try await socket.send(.unbind(1))
                _ = try await socket.next("unbound") { if case .unbound(1) = $0 { true } else { nil } }
                let wanted = Self.set("a IN ('y', 'z')")
                try await socket.send(.bind(Self.bind(
                    1, held: Self.set("a = 'x'"), wanted: wanted, identity: reply.identity, version: version)))
                let rebound = try await socket.next("the bind's reply") { if case .bound(let r) = $0 { r } else { nil } }
                #expect(!rebound.stateFollows)
                var changes: [RowChange] = []
                var last: SubscriptionChunk
                repeat {
                    last = try await socket.next("a subscription chunk") { if case .subscriptionChunk(let c) = $0 { c } else { nil } }
                    changes += last.changes.changeset.changes
                } while !last.isLast
                #expect(last.setDigest == wanted.digest)
                #expect(last.serverVersion == version)
                #expect(Set(changes) == [
                    .delete("t", .integer(1)), .delete("t", .integer(3)), .insert("t", .integer(2), ["a": .text("y")]),
                    .insert("t", .integer(4), ["a": .text("y")]), .insert("t", .integer(5), ["a": .text("z")]),
                ])
            }
        }
    }

    @Test func aSetThatCannotBeServedIs227AndNothingIsRegistered() async throws {
        try await InProcessSync.run { sync, client in
            try await client.sync { socket in
                try await socket.hello()
                for (session, filter) in [(SessionID(1), "nope = 1"), (2, "a = {tag:shop}"), (3, "a = ")] {
                    try await socket.send(.bind(Self.bind(session, wanted: Self.set(filter))))
                    let error = try await socket.next("the refusal") { if case .error(let e) = $0, e.session == session { e.error } else { nil } }
                    #expect(error.code == .badQuery)
                    #expect(error.action == .fatal)
                }
                try await socket.send(.bind(Self.bind(4, wanted: try SubscriptionSet([Subscription(table: "missing")]))))
                let error = try await socket.next("the refusal") { if case .error(let e) = $0, e.session == 4 { e.error } else { nil } }
                #expect(error.code == .badQuery && error.message.contains("no table missing"))
            }
            #expect(try await sync.storage.head(of: partition) == nil, "no client file was registered")
        }
    }

    @Test func aWriteOutsideTheGrantsWriteRuleIsACompensatingWrite() async throws {
        let rules = """
            [[grant.write]]
            table = "t"
            where = "a IS NULL OR a != 'locked'"
            """
        try await InProcessSync.run(grantRules: rules) { sync, client in
            _ = try await write(sync.storage, [(1, "locked"), (2, "open")])
            try await client.sync { socket in
                try await socket.hello()
                _ = try await bootstrap(socket, 1, wanted: nil)
                let upload = UploadChangeset(firstSeq: 1, lastSeq: 3, changeset: Changeset([
                    .update("t", .integer(1), ["a": .text("mine")]), .update("t", .integer(2), ["a": .text("locked")]),
                    .insert("t", .integer(3), ["a": .text("new")]),
                ]))
                try await socket.send(.upload(Upload(session: 1, changesets: [upload])))
                let notice = try await socket.next("the compensating writes") { if case .compensatingWrites(let w) = $0 { w } else { nil } }
                #expect(notice.writes.map(\.key) == [.integer(1), .integer(2)])
                #expect(notice.writes.allSatisfy { $0.reason == .writeRule })
                let ack = try await socket.next("the acknowledgement") {
                    if case .download(let d) = $0, d.session == 1, let e = d.entries.first { e } else { nil }
                }
                #expect(ack.changes.changeset.changes == [
                    .insert("t", .integer(1), ["a": .text("locked")]), .insert("t", .integer(2), ["a": .text("open")]),
                ], "the reverts put the server's rows back: the session holds them")
            }
            let state = try await sync.storage.openState(of: partition)
            let rows = try await state.next(maxRows: 100, maxBytes: 1 << 20)
            await state.close()
            #expect(rows.map { $0.fields["a"] } == [.text("locked"), .text("open"), .text("new")])
        }
    }

    @Test func aReadOnlyColumnMayNotChange() async throws {
        try await InProcessSync.run(grantRules: "[[grant.write]]\ntable = \"t\"\nread_only = [\"a\"]") { sync, client in
            _ = try await write(sync.storage, [(1, "fixed")])
            try await client.sync { socket in
                try await socket.hello()
                _ = try await bootstrap(socket, 1, wanted: nil)
                let upload = UploadChangeset(firstSeq: 1, lastSeq: 2, changeset: Changeset([
                    .update("t", .integer(1), ["a": .text("changed")]), .insert("t", .integer(2), ["a": .text("new rows may")]),
                ]))
                try await socket.send(.upload(Upload(session: 1, changesets: [upload])))
                let notice = try await socket.next("the compensating writes") { if case .compensatingWrites(let w) = $0 { w } else { nil } }
                #expect(notice.writes.map(\.key) == [.integer(1)])
                #expect(notice.writes.first?.reason == .readOnlyColumn)
                #expect(notice.writes.first?.message.contains("column a") == true)
            }
        }
    }
}
