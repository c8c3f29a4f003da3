import Testing
import TetherProtocol
import TetherServer

@Suite struct SyncHubTests {
    let partition = PartitionName("store-17")!

    func session(_ connection: UInt64, _ id: SessionID, file: Int64) -> BoundSession {
        BoundSession(
            key: SessionKey(connection: connection, session: id), partition: partition, clientFile: file, user: "u",
            tokenDigest: TokenDigest(token: "t"), access: .readwrite, fail: { _ in })
    }

    @Test func aClientFileIsBoundOnceAtATime() async {
        let hub = SyncHub()
        let a = SessionKey(connection: 1, session: 1)
        let b = SessionKey(connection: 2, session: 1)
        #expect(await hub.reserve(5, of: partition, for: a))
        #expect(await hub.reserve(5, of: partition, for: a))
        #expect(await !hub.reserve(5, of: partition, for: b))
        #expect(await hub.reserve(6, of: partition, for: b))
        await hub.release(a)
        #expect(await hub.reserve(5, of: partition, for: b))
    }

    /// A release frees exactly the client files its session reserved (each once, however often
    /// it reserved them), from its own list rather than a scan of every owner.
    @Test func aReleaseFreesTheClientFilesOfItsSessionOnly() async {
        let hub = SyncHub()
        let other = PartitionName("store-18")!
        let a = SessionKey(connection: 1, session: 1)
        let b = SessionKey(connection: 1, session: 2)
        #expect(await hub.reserve(5, of: partition, for: a))
        #expect(await hub.reserve(5, of: partition, for: a))
        #expect(await hub.reserve(5, of: other, for: a))
        #expect(await hub.reserve(7, of: partition, for: b))
        #expect(await hub.release(a) == [5, 5])
        #expect(await hub.release(a) == [])
        #expect(await hub.reserve(5, of: partition, for: b))
        #expect(await hub.reserve(5, of: other, for: b))
        #expect(await !hub.reserve(7, of: partition, for: a), "b still holds 7")
        #expect(Set(await hub.release(b)) == [5, 7])
        #expect(await hub.reserve(7, of: partition, for: a))
    }

    @Test func publishWakesTheSessionsOfThePartition() async {
        let hub = SyncHub()
        _ = await hub.reserve(5, of: partition, for: SessionKey(connection: 1, session: 1))
        let wakeups = await hub.register(session(1, 1, file: 5))
        var iterator = wakeups.runs().makeAsyncIterator()
        #expect(await iterator.next() != nil)  // the initial wake-up
        await hub.publish(partition)
        await hub.publish(partition)  // coalesced with the previous one
        #expect(await iterator.next() != nil)
        #expect(await hub.sessionCounts() == [partition: 1])
        await hub.release(SessionKey(connection: 1, session: 1))
        #expect(wakeups.isFinished)  // released: no more wake-ups
        #expect(await hub.bound().isEmpty)
    }
}
