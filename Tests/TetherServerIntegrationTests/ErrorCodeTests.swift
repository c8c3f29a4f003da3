import Foundation
import Testing
import TetherSyncClient
import TetherProtocol
import TetherServer

/// One test per error code the server sends, provoked through the admin API or bad input,
/// checking code, action and hint.
@Suite struct ErrorCodeTests {
    func expect(_ error: SyncError, _ code: SyncErrorCode, _ action: ErrorAction, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error.code == code, sourceLocation: sourceLocation)
        #expect(error.action == action, sourceLocation: sourceLocation)
        #expect(!error.hint.isEmpty, sourceLocation: sourceLocation)
    }

    /// Binds expecting a session error.
    func bindError(_ server: ServerProcess, _ makeDevice: @escaping @Sendable @autoclosure () -> TestDevice) async throws -> SyncError {
        try await withConnection(server) { connection in
            do {
                try await makeDevice().bind(on: connection)
            } catch let error as SyncError {
                return error
            }
            throw ServerFailure("bind was accepted")
        }
    }

    /// A device that synced `writes` versions of its own.
    func syncedDevice(_ server: ServerProcess, partition: String = "store-17", writes: Int = 1) async throws -> DeviceState {
        try await withConnection(server) { connection in
            let device = TestDevice(partition: partition)
            try await device.bind(on: connection)
            for i in 0..<writes {
                device.write(.insert("orders", .text(UUID().uuidString), ["customer": .text("c\(i)"), "total": .real(1)]))
                try await device.upload()
                try await device.syncUntilCaughtUp()
            }
            return device.state
        }
    }

    @Test func wrongProtocolVersionIs105NamingBothVersions() async throws {
        try await withServer { server in
            try await withRawConnection(server) { raw in
                try await raw.send(.hello(Hello(protocolVersion: 99, software: "future-agent")))
                let error = try await raw.connectionError()
                #expect(error.code == .wrongProtocolVersion)
                #expect(error.action == .fatal)
                #expect(error.hint == SyncErrorCode.wrongProtocolVersion.hint)
                #expect(error.message.contains("99") && error.message.contains("sync protocol \(TetherVersion.syncProtocol)"))
            }
        }
    }

    @Test func clientFileBoundTwiceIs108() async throws {
        try await withServer { server in
            let state = try await syncedDevice(server)
            try await withConnection(server) { first in
                let holder = TestDevice(state: state)
                try await holder.bind(on: first)
                let error = try await bindError(server, TestDevice(state: state))
                expect(error, .clientFileBoundInOtherSession, .retry)
                #expect(error.hint == SyncErrorCode.clientFileBoundInOtherSession.hint)
            }
        }
    }

    @Test func badTokenIs203() async throws {
        try await withServer { server in
            let error = try await bindError(server, TestDevice(partition: "store-17", token: "not-a-token"))
            expect(error, .badUserAuthentication, .reauth)
            #expect(error.hint == SyncErrorCode.badUserAuthentication.hint)
            #expect(!server.log.contains("not-a-token"))
        }
    }

    @Test func illegalPartitionNameIs204() async throws {
        try await withServer { server in
            let error = try await bindError(server, TestDevice(partition: "bad name!"))
            expect(error, .illegalPartitionName, .fatal)
        }
    }

    @Test func partitionWithoutGrantIs206() async throws {
        try await withServer { server in
            let error = try await bindError(server, TestDevice(partition: "store-17", user: "nobody"))
            expect(error, .permissionDenied, .deleteStore)
            #expect(error.hint == SyncErrorCode.permissionDenied.hint)
        }
    }

    @Test func uploadToAReadOnlyPartitionIs206() async throws {
        try await withServer { server in
            try await withRawConnection(server) { raw in
                try await raw.send(helloMessage)
                try await raw.send(.bind(BindRequest(session: 1, partition: "catalog-eu", token: ServerProcess.tokens["reader"]!, identity: nil)))
                let reply = try await raw.receive { if case .bound(let reply) = $0 { reply } else { nil } }
                #expect(reply.access == .read)
                _ = try await raw.receive { if case .state(let chunk) = $0, chunk.isLast { chunk } else { nil } }
                try await raw.send(.upload(Upload(session: 1, changesets: [
                    UploadChangeset(firstSeq: 1, lastSeq: 1, changeset: Changeset([.insert("orders", .text("x"), ["customer": .text("c"), "total": .real(1)])])),
                ])))
                let error = try await raw.receive { if case .error(let e) = $0 { e } else { nil } }
                #expect(error.session == 1)
                expect(error.error, .permissionDenied, .deleteStore)
            }
        }
    }

    @Test func revokingAGrantPushes206ToBoundSessions() async throws {
        try await withServer { server in
            try await withConnection(server) { connection in
                let device = TestDevice(partition: "catalog-eu")
                try await device.bind(on: connection)
                let changed = try await server.admin.revoke(user: "pos-17", pattern: "catalog-*")
                #expect(changed.sessionsNotified == 1)
                let error = try await device.nextError()
                expect(error, .permissionDenied, .deleteStore)
                // The session is unbound after the error.
                guard case .unbound = try await device.nextEvent() else { throw ServerFailure("expected unbound") }
            }
        }
    }

    @Test func unknownClientFileIs208() async throws {
        try await withServer { server in
            let state = DeviceState(identity: ClientFileIdentity(id: 424_242, salt: 7))
            let error = try await bindError(server, TestDevice(state: state))
            expect(error, .badClientFileIdentifier, .clientReset)
            #expect(error.hint == SyncErrorCode.badClientFileIdentifier.hint)
        }
    }

    @Test func restoreMakesADeviceThatSyncedPastTheSnapshotGet211() async throws {
        try await withServer { server in
            var state = try await syncedDevice(server, writes: 1)
            let snapshot = try await server.admin.snapshot("store-17")
            #expect(snapshot.serverVersion == 1)
            let before = state
            state = try await withConnection(server) { connection in
                let device = TestDevice(state: before)
                try await device.bind(on: connection)
                device.write(.insert("orders", .text("after"), ["customer": .text("x"), "total": .real(2)]))
                try await device.upload()
                try await device.syncUntilCaughtUp()
                return device.state
            }
            #expect(state.lastServerVersion.version == 2)
            _ = try await server.admin.restore("store-17", snapshot: snapshot.snapshot)
            let past = state
            // The device is ahead of the restored history.
            expect(try await bindError(server, TestDevice(state: past)), .divergingHistories, .clientReset)
            // After other devices pass version 2 again, its version exists with another salt: still 211.
            _ = try await syncedDevice(server, writes: 2)
            let error = try await bindError(server, TestDevice(state: past))
            expect(error, .divergingHistories, .clientReset)
            #expect(error.hint == SyncErrorCode.divergingHistories.hint)
        }
    }

    @Test func deviceOlderThanTheCompactedHistoryGets222() async throws {
        try await withServer { server in
            let old = try await syncedDevice(server, writes: 1)
            _ = try await syncedDevice(server, writes: 2)
            let compacted = try await server.admin.compact(horizonSeconds: 0)
            #expect(compacted.removedEntries["store-17"] == 3)
            let error = try await bindError(server, TestDevice(state: old))
            expect(error, .clientFileExpired, .clientReset)
        }
    }

    @Test func uploadThatDoesNotFitTheSchemaIs225() async throws {
        try await withServer { server in
            try await withConnection(server) { connection in
                let device = TestDevice()
                try await device.bind(on: connection)
                device.write(.insert("orders", .text("x"), ["customer": .text("c"), "total": .real(1), "colour": .text("red")]))
                try await device.upload()
                let error = try await device.nextError()
                expect(error, .invalidSchemaChange, .clientReset)
                #expect(error.hint == SyncErrorCode.invalidSchemaChange.hint)
                #expect(error.message.contains("colour"))
            }
        }
    }

    /// A misbehaving client's insert without a value for a non-nullable column: agents would
    /// refuse to apply it, so the server refuses it (225) instead of passing it on.
    @Test func anIncompleteInsertIs225() async throws {
        try await withServer { server in
            try await withConnection(server) { connection in
                let device = TestDevice()
                try await device.bind(on: connection)
                device.write(.insert("orders", .text("x"), ["total": .real(1)]))
                try await device.upload()
                let error = try await device.nextError()
                expect(error, .invalidSchemaChange, .clientReset)
                #expect(error.message.contains("orders.customer is not nullable"))
            }
        }
    }

    @Test func breakingSchemaApplyMakesOldDevicesGet235() async throws {
        try await withServer { server in
            let old = try await syncedDevice(server)
            #expect(old.schemaVersion == 1)
            let v2 = ServerProcess.schemaV1.replacingOccurrences(of: "version = 1", with: "version = 2")
                .replacingOccurrences(of: "total = \"real\"", with: "total = \"text\"")
            await #expect(throws: AdminClient.Failure.self) {
                try await server.admin.applySchema(toml: v2, file: "schema-v2.toml", allowBreaking: false)
            }
            let applied = try await server.admin.applySchema(toml: v2, file: "schema-v2.toml", allowBreaking: true)
            #expect(applied.applied && applied.breaking)
            let error = try await bindError(server, TestDevice(state: old))
            expect(error, .badSchemaVersion, .clientReset)
            #expect(error.hint == SyncErrorCode.badSchemaVersion.hint)
            // A new device gets the new schema and the migrated state.
            let fresh = try await withConnection(server) { connection in
                let device = TestDevice()
                let reply = try await device.bind(on: connection)
                #expect(reply.schema.version == 2)
                return device.state
            }
            #expect(fresh.rows.values.allSatisfy { $0["total"] == .text("") })
        }
    }

    @Test func nonBreakingSchemaChangeIsAcceptedAndSentInTheBindReply() async throws {
        try await withServer { server in
            let old = try await syncedDevice(server)
            let v2 = ServerProcess.schemaV1.replacingOccurrences(of: "version = 1", with: "version = 2") + "\nsku = \"text?\"\n"
            let applied = try await server.admin.applySchema(toml: v2, file: "schema-v2.toml", allowBreaking: false)
            #expect(applied.applied && !applied.breaking)
            try await withConnection(server) { connection in
                let device = TestDevice(state: old)
                let reply = try await device.bind(on: connection)
                #expect(reply.schema.version == 2)
                #expect(reply.schema.table("orders")?.column("sku")?.nullable == true)
            }
        }
    }

    @Test func terminatedSyncIs201ThenEnabledSyncIs208() async throws {
        try await withServer { server in
            let state = try await syncedDevice(server)
            try await withConnection(server) { connection in
                let bound = TestDevice(state: state)
                try await bound.bind(on: connection)
                let terminated = try await server.admin.terminateSync()
                #expect(terminated.clientFilesForgotten == 1 && terminated.sessionsNotified == 1)
                expect(try await bound.nextError(), .otherSessionError, .retry)
            }
            let whileTerminated = try await bindError(server, TestDevice(state: state))
            expect(whileTerminated, .otherSessionError, .retry)
            #expect(whileTerminated.message.contains("terminated"))
            #expect(whileTerminated.retryAfterMilliseconds != nil)
            _ = try await server.admin.enableSync()
            expect(try await bindError(server, TestDevice(state: state)), .badClientFileIdentifier, .clientReset)
        }
    }

    @Test func recoveryOffTurnsResetsIntoResetsWithoutRecovery() async throws {
        try await withServer { server in
            let state = DeviceState(identity: ClientFileIdentity(id: 99, salt: 1))
            _ = try await server.admin.setRecovery(false)
            let error = try await bindError(server, TestDevice(state: state))
            expect(error, .badClientFileIdentifier, .clientResetNoRecovery)
            _ = try await server.admin.setRecovery(true)
            expect(try await bindError(server, TestDevice(state: state)), .badClientFileIdentifier, .clientReset)
            // Not a reset: unchanged by the setting.
            _ = try await server.admin.setRecovery(false)
            expect(try await bindError(server, TestDevice(partition: "store-17", user: "nobody")), .permissionDenied, .deleteStore)
        }
    }

    @Test func clientRecoveryFalseInTheConfig() async throws {
        try await withServer(clientRecovery: false) { server in
            let state = DeviceState(identity: ClientFileIdentity(id: 99, salt: 1))
            expect(try await bindError(server, TestDevice(state: state)), .badClientFileIdentifier, .clientResetNoRecovery)
            #expect(try await server.admin.status().server.clientRecovery == false)
        }
    }

    @Test func anAccessChangeTellsBoundSessionsToBindAgain() async throws {
        try await withServer { server in
            try await withConnection(server) { connection in
                let device = TestDevice(partition: "catalog-eu", user: "reader")
                let reply = try await device.bind(on: connection)
                #expect(reply.access == .read)
                let changed = try await server.admin.grant(user: "reader", pattern: "catalog-eu", access: "readwrite")
                #expect(changed.sessionsNotified == 1)
                let error = try await device.nextError()
                expect(error, .otherSessionError, .retry)
                #expect(error.retryAfterMilliseconds == 0)
                guard case .unbound = try await device.nextEvent() else { throw ServerFailure("expected unbound") }
                let again = TestDevice(partition: "catalog-eu", user: "reader", state: device.state)
                #expect(try await again.bind(on: connection, session: 2).access == .readwrite)
            }
        }
    }

    @Test func anUploadAfterAGapIsRefusedWith201() async throws {
        try await withServer { server in
            try await withConnection(server) { connection in
                let device = TestDevice()
                try await device.bind(on: connection)
                let lost = UploadChangeset(
                    afterSeq: 3, firstSeq: 4, lastSeq: 4,
                    changeset: Changeset([.insert("orders", .text("x"), ["customer": .text("c"), "total": .real(1)])]))
                try await device.session?.upload([lost])
                let error = try await device.nextError()
                expect(error, .otherSessionError, .retry)
                #expect(error.message.contains("after seq 3") && error.message.contains("seq 0"))
            }
            #expect(try await server.admin.status().partitions.first?.serverVersion == 0)
        }
    }
}
