import Foundation
import Testing
import TetherSyncClient
import TetherProtocol
import TetherServer

@Suite struct ConvergenceTests {
    @Test func twoClientsConvergeOnOnePartition() async throws {
        try await withServer { server in
            let (a, b, fresh) = try await withConnection(server) { connection in
                let a = TestDevice()
                let b = TestDevice()
                try await a.bind(on: connection, session: 1)
                try await b.bind(on: connection, session: 2)
                a.write(.insert("orders", .text("o1"), ["customer": .text("Ada"), "total": .real(10), "note": .null]))
                a.write(.insert("orders", .text("o2"), ["customer": .text("Bob"), "total": .real(5), "note": .null]))
                try await a.upload()
                try await a.syncUntilCaughtUp()
                try await b.syncUntil(version: a.state.lastServerVersion.version)
                #expect(b.state.rows == a.state.rows)
                // Concurrent edits: B updates one field of o1 and deletes o2 while A updates another field of o1.
                b.write(.update("orders", .text("o1"), ["total": .real(12)]))
                b.write(.delete("orders", .text("o2")))
                a.write(.update("orders", .text("o1"), ["note": .text("gift")]))
                a.write(.update("orders", .text("o2"), ["total": .real(6)]))
                try await b.upload()
                try await a.upload()
                try await a.syncUntilCaughtUp()
                try await b.syncUntilCaughtUp()
                try await b.syncUntil(version: a.state.lastServerVersion.version)
                try await a.syncUntil(version: b.state.lastServerVersion.version)
                // A third device bootstraps from the server's state.
                let fresh = TestDevice()
                try await fresh.bind(on: connection, session: 3)
                return (a.state, b.state, fresh.state)
            }
            #expect(a.rows == b.rows)
            #expect(a.rows == fresh.rows)
            #expect(a.lastServerVersion == b.lastServerVersion)
            #expect(a.rows.count == 1)
            #expect(a.rows[RowRef(table: "orders", key: .text("o1"))] == [
                "customer": .text("Ada"), "total": .real(12), "note": .text("gift"),
            ])
        }
    }

    @Test func reconnectResumesFromTheLastAcknowledgedVersion() async throws {
        try await withServer { server in
            let before = try await withConnection(server) { connection in
                let device = TestDevice()
                try await device.bind(on: connection)
                for i in 1...3 {
                    device.write(.insert("orders", .text("a\(i)"), ["customer": .text("A"), "total": .real(Double(i))]))
                    try await device.upload()
                    try await device.syncUntilCaughtUp()
                }
                return device.state
            }
            #expect(before.lastServerVersion.version == 3)
            #expect(before.pending.isEmpty)
            // Another device adds two versions while the first is away.
            try await withConnection(server) { connection in
                let other = TestDevice()
                try await other.bind(on: connection)
                other.write(.insert("orders", .text("b1"), ["customer": .text("B"), "total": .real(1)]))
                try await other.upload()
                other.write(.update("orders", .text("a1"), ["total": .real(100)]))
                try await other.upload()
                try await other.syncUntilCaughtUp()
            }
            let after = try await withConnection(server) { connection in
                let device = TestDevice(state: before)
                device.state.receivedVersions = []
                let reply = try await device.bind(on: connection)
                #expect(!reply.stateFollows && !reply.isNewIdentity)
                try await device.syncUntilCaughtUp()
                return device.state
            }
            // Only the two new versions were sent: no history before the device's version.
            #expect(after.receivedVersions == [4, 5])
            #expect(after.rows[RowRef(table: "orders", key: .text("a1"))]?["total"] == .real(100))
            #expect(after.rows.count == 4)
        }
    }

    @Test func killNineLosesNoAcknowledgedUpload() async throws {
        try await withServer { server in
            let count = 20
            let acknowledged = try await withConnection(server) { connection in
                let device = TestDevice()
                try await device.bind(on: connection)
                for i in 1...count {
                    device.write(.insert("orders", .text("k\(i)"), ["customer": .text("K"), "total": .real(Double(i))]))
                    try await device.upload()
                }
                // Every upload acknowledged (pending empty) before the kill.
                try await device.syncUntilCaughtUp()
                return device.state
            }
            #expect(acknowledged.pending.isEmpty)
            try await server.kill9()
            try await server.start()
            let (recovered, replayed) = try await withConnection(server) { connection in
                let fresh = TestDevice()
                try await fresh.bind(on: connection, session: 1)
                // The first device re-sends its last batch (as after a crash before the ack): ignored.
                let device = TestDevice(state: acknowledged)
                let reply = try await device.bind(on: connection, session: 2)
                #expect(reply.integratedClientSeq == Int64(count))
                try await device.session?.upload([UploadChangeset(
                    afterSeq: Int64(count - 1), firstSeq: Int64(count), lastSeq: Int64(count),
                    changeset: Changeset([.insert("orders", .text("k\(count)"), ["customer": .text("dup"), "total": .real(0)])]))])
                try await connection.ping()
                return (fresh.state, device.state)
            }
            #expect(recovered.rows.count == count)
            #expect(recovered.lastServerVersion.version == Int64(count))
            #expect(recovered.rows[RowRef(table: "orders", key: .text("k\(count)"))]?["customer"] == .text("K"))
            _ = replayed
            let status = try await server.admin.status()
            #expect(status.partitions.first?.serverVersion == Int64(count))
            #expect(status.partitions.first?.historyEntries == count)
        }
    }

    @Test func stateDownloadIsChunkedWithProgressAndEndsAtItsVersion() async throws {
        try await withServer { server in
            try await withConnection(server, deadline: .seconds(60)) { connection in
                let writer = TestDevice()
                try await writer.bind(on: connection, session: 1)
                for i in 0..<5000 {
                    writer.write(.insert("orders", .text(String(format: "r%05d", i)), ["customer": .text("c"), "total": .real(Double(i)), "note": .null]))
                }
                try await writer.upload()
                try await writer.syncUntilCaughtUp()

                let session = try await connection.bind(BindRequest(session: 2, partition: "store-17", token: writer.token, identity: nil))
                var chunks: [StateChunk] = []
                for await event in session.events {
                    switch event {
                    case .bound(let reply): #expect(reply.stateFollows && reply.latestServerVersion.version == 1)
                    case .state(let chunk): chunks.append(chunk)
                    default: Issue.record("unexpected \(event)")
                    }
                    if chunks.last?.isLast == true { break }
                }
                #expect(chunks.count >= 3)
                #expect(chunks.map(\.progress.rowsDone) == chunks.map(\.progress.rowsDone).sorted())
                #expect(chunks.allSatisfy { $0.progress.rowsTotal == 5000 && $0.serverVersion.version == 1 })
                #expect(chunks.last?.progress.rowsDone == 5000)
                #expect(chunks.last?.progress.bytesDone == chunks.last?.progress.bytesTotal)
                #expect(Set(chunks.flatMap { $0.rows.changeset.changes.map(\.key) }).count == 5000)
            }
        }
    }

    @Test func aResetDeviceRebindsAsNewAndRecoversItsChanges() async throws {
        try await withServer { server in
            let errors = ErrorCodeTests()
            let state = try await errors.syncedDevice(server, writes: 1)
            let snapshot = try await server.admin.snapshot("store-17")
            let ahead = try await withConnection(server) { connection in
                let device = TestDevice(state: state)
                try await device.bind(on: connection)
                device.write(.insert("orders", .text("synced-then-lost"), ["customer": .text("x"), "total": .real(1)]))
                try await device.upload()
                try await device.syncUntilCaughtUp()
                // An unsynced change the reset must recover.
                device.write(.insert("orders", .text("unsynced"), ["customer": .text("y"), "total": .real(2)]))
                return device.state
            }
            _ = try await server.admin.restore("store-17", snapshot: snapshot.snapshot)
            let after = try await withConnection(server) { connection in
                let device = TestDevice(state: ahead)
                do {
                    try await device.bind(on: connection)
                    throw ServerFailure("bind was accepted")
                } catch let error as SyncError {
                    #expect(error.code == .divergingHistories)
                }
                // The reset: a new identity and the server's state, then the recovered change uploaded.
                let recovered = ahead.pending.map(\.change)
                let reset = TestDevice(state: DeviceState())
                let reply = try await reset.bind(on: connection, session: 2)
                #expect(reply.isNewIdentity && reply.identity != ahead.identity)
                for change in recovered { reset.write(change) }
                try await reset.upload()
                try await reset.syncUntilCaughtUp()
                return reset.state
            }
            #expect(after.rows[RowRef(table: "orders", key: .text("unsynced"))] != nil)
            #expect(after.rows[RowRef(table: "orders", key: .text("synced-then-lost"))] == nil)
            #expect(after.lastServerVersion.version == 2)
        }
    }
}
