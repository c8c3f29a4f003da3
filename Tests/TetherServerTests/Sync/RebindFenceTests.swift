import Synchronization
import Testing
import TetherProtocol
@testable import TetherServer

/// The rebind fence: the sessions it selects hear 201 with retry, the others nothing; a
/// storage's fence reads as the same kind of error.
@Suite struct RebindFenceTests {
    final class Received: Sendable {
        let errors = Mutex<[SessionKey: SyncError]>([:])
    }

    func session(_ connection: UInt64, partition: String, file: Int64, received: Received) -> BoundSession {
        let key = SessionKey(connection: connection, session: 1)
        return BoundSession(
            key: key, partition: PartitionName(partition)!, clientFile: file, user: "u", tokenDigest: TokenDigest(token: "t"),
            access: .readwrite, fail: { error in received.errors.withLock { $0[key] = error } })
    }

    @Test func rebindReachesTheSelectedSessionsOnly() async {
        let hub = SyncHub()
        let fence = RebindFence(hub: hub)
        let received = Received()
        for (connection, partition) in [(1, "a"), (2, "b"), (3, "a")] as [(UInt64, String)] {
            let bound = session(connection, partition: partition, file: Int64(connection), received: received)
            _ = await hub.reserve(bound.clientFile, of: bound.partition, for: bound.key)
            _ = await hub.register(bound)
        }
        let told = await fence.rebind(where: { $0.partition.rawValue == "a" }, because: "partition a was restored")
        #expect(told == 2)
        let errors = received.errors.withLock { $0 }
        #expect(Set(errors.keys.map(\.connection)) == [1, 3])
        for error in errors.values {
            #expect(error == BindRules.rebind("partition a was restored"))
            #expect(error.retryAfterMilliseconds == 0)
        }
    }

    @Test func aStoragesFenceIsARebind() {
        let fence = RebindFence(hub: SyncHub())
        let error = fence.fenced("partition a")
        #expect(error.code == BindRules.rebind("x").code)
        #expect(error.message.contains("partition a was restored, or sync was terminated"))
    }
}
