import Testing
import TetherProtocol
@testable import TetherServer

/// A connection's bound sessions (``ServerSessionTable``): one value per session, so its send
/// window, its generation and where its streamer starts come and go together.
@Suite struct ServerSessionTableTests {
    let partition = PartitionName("store-17")!

    func bound(_ id: SessionID, file: Int64 = 5) -> BoundSession {
        BoundSession(
            key: SessionKey(connection: 1, session: id), partition: partition, clientFile: file, user: "u",
            tokenDigest: TokenDigest(token: "t"), access: .readwrite, fail: { _ in })
    }

    func bind(_ table: inout ServerSessionTable, _ id: SessionID, flowControl: Bool = true) -> ServerSession {
        table.bind(id, as: bound(id), flowControl: flowControl, wakeups: DownloadWakeup(), after: .none)
    }

    @Test func eachBindGetsANewGeneration() {
        var table = ServerSessionTable()
        let first = bind(&table, 1)
        let second = bind(&table, 2)
        #expect(first.generation != second.generation)
        #expect(table.isCurrent(1, generation: first.generation))
        #expect(table.isCurrent(2, generation: second.generation))
        #expect(!table.isCurrent(1, generation: second.generation))
    }

    @Test func theStreamStartLastsOnlyForTheAcceptedBindsStep() {
        var table = ServerSessionTable()
        let session = bind(&table, 1)
        #expect(table[1]?.streamStart != nil)
        table.bindPerformed(1, generation: session.generation)
        #expect(table[1]?.streamStart == nil)
        #expect(table[1] != nil, "the session stays bound")
    }

    @Test func theEndOfAnEarlierBindsStepLeavesALaterBindsStart() {
        var table = ServerSessionTable()
        let earlier = bind(&table, 1)
        _ = bind(&table, 1)
        table.bindPerformed(1, generation: earlier.generation)
        #expect(table[1]?.streamStart != nil)
    }

    @Test func theWindowFollowsTheNegotiatedFlowControl() {
        var table = ServerSessionTable()
        #expect(bind(&table, 1, flowControl: true).window.available == ProtocolLimits.initialSendWindow)
        #expect(bind(&table, 2, flowControl: false).window.available == nil)
    }

    @Test func bindingTheSameIDAgainClosesTheEarlierWindowAndSupersedesItsGeneration() async {
        var table = ServerSessionTable()
        let earlier = bind(&table, 1)
        let later = bind(&table, 1)
        #expect(await earlier.window.take() == false, "the earlier bind's streamer stops")
        #expect(await later.window.take() == true)
        #expect(!table.isCurrent(1, generation: earlier.generation))
        #expect(table.isCurrent(1, generation: later.generation))
        #expect(table.count == 1)
    }

    @Test func releasingRemovesTheSessionAndClosesItsWindow() async {
        var table = ServerSessionTable()
        let session = bind(&table, 1)
        let released = table.release(1)
        #expect(released?.generation == session.generation)
        #expect(released?.bound.key == SessionKey(connection: 1, session: 1))
        #expect(await session.window.take() == false)
        #expect(table[1] == nil)
        #expect(!table.isCurrent(1, generation: session.generation))
        #expect(table.release(1) == nil, "released once")
    }
}
