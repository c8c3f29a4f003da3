import Foundation
import NIOCore
import Testing
import TetherProtocol
import TetherServer

/// Malformed frames, oversized messages and wrong message order get a protocol error and a
/// closed connection; the server keeps serving everyone else.
@Suite struct ProtocolAbuseTests {
    /// Sends `frames` after an optional hello and returns the connection-level error.
    func provoke(_ server: ServerProcess, hello: Bool = true, _ send: @escaping @Sendable (RawConnection) async throws -> Void) async throws -> SyncError {
        let box = ErrorBox()
        try await withRawConnection(server) { raw in
            if hello {
                try await raw.send(helloMessage)
                _ = try await raw.receive { if case .welcome(let w) = $0 { w } else { nil } }
            }
            try await send(raw)
            await box.set(try await raw.connectionError())
        }
        guard let error = await box.error else { throw ServerFailure("no error") }
        // The server is still up and serving.
        _ = try await server.admin.status()
        return error
    }

    actor ErrorBox {
        var error: SyncError?
        func set(_ error: SyncError) { self.error = error }
    }

    @Test func randomBytesAreABadSyntaxOrUnknownMessage() async throws {
        try await withServer { server in
            var rng = SystemRandomNumberGenerator()
            for _ in 0..<5 {
                let garbage = [UInt8(0x03)] + (0..<64).map { _ in UInt8.random(in: 0...255, using: &rng) }
                let error = try await provoke(server) { try await $0.sendBytes(garbage) }
                #expect([.badSyntax, .limitsExceeded].contains(error.code))
            }
            #expect(try await provoke(server) { try await $0.sendBytes([0x42, 1, 2, 3]) }.code == .unknownMessage)
        }
    }

    @Test func textFramesAreBadSyntax() async throws {
        try await withServer { server in
            let error = try await provoke(server) { try await $0.sendText("{\"hello\": 1}") }
            #expect(error.code == .badSyntax)
            #expect(error.action == .retry)
        }
    }

    /// From an authenticated connection (before a bind with an accepted token, the connection is
    /// closed after `[limits] unauthenticated_bytes`: ConnectionLimitsTests).
    @Test func oversizedMessagesAre104() async throws {
        try await withServer { server in
            let error = try await provoke(server) { raw in
                try await raw.send(.bind(BindRequest(
                    session: 1, partition: "store-17", token: ServerProcess.tokens["pos-17"]!, identity: nil, schemaVersion: 1)))
                _ = try await raw.receive { if case .bound(let reply) = $0 { reply } else { nil } }
                var big = ClientMessage.upload(Upload(session: 1, changesets: [])).encoded()
                big += [UInt8](repeating: 0, count: ProtocolLimits.maxMessageBytes + 1 - big.count)
                try await raw.sendBytes(big)
            }
            #expect(error.code == .limitsExceeded)
        }
    }

    @Test func wrongMessageOrderIs109() async throws {
        try await withServer { server in
            // A bind before the hello.
            var error = try await provoke(server, hello: false) { try await $0.send(.bind(BindRequest(session: 1, partition: "store-17", token: "x", identity: nil))) }
            #expect(error.code == .badMessageOrder)
            // An upload on a session that is not bound.
            error = try await provoke(server) { raw in
                try await raw.send(.upload(Upload(session: 3, changesets: [])))
            }
            #expect(error.code == .badMessageOrder)
            #expect(error.message.contains("session 3"))
            // A second hello.
            error = try await provoke(server) { try await $0.send(helloMessage) }
            #expect(error.code == .badMessageOrder)
            // A second bind on a session that is already bound.
            error = try await provoke(server) { raw in
                let bind = BindRequest(session: 1, partition: "store-17", token: ServerProcess.tokens["pos-17"]!, identity: nil)
                try await raw.send(.bind(bind))
                _ = try await raw.receive { if case .state(let chunk) = $0, chunk.isLast { chunk } else { nil } }
                try await raw.send(.bind(bind))
            }
            #expect(error.code == .badMessageOrder)
        }
    }

    /// A heal with an unknown flag bit is 103. (A heal on a connection that negotiated a
    /// protocol before healing is 109: `ConnectionStateMachineTests.healNeedsProtocol4`; the real
    /// server accepts only its own protocol and the one before, both with healing.)
    @Test func aMalformedHealIs103() async throws {
        try await withServer { server in
            let offer = HealChunk.offer(session: 1, contribution: 1, view: ServerVersion(version: 1, salt: 1), base: 0)
            let error = try await provoke(server) { raw in
                var bytes = ClientMessage.heal(offer).encoded()
                bytes[6] = 0x02  // the flags: bit 1 is not defined
                try await raw.sendBytes(bytes)
            }
            #expect(error.code == .badSyntax)
        }
    }

    /// Device reports as an attacker would send them: one whose name carries a terminal escape
    /// is 103 (the connection closed, nothing kept); one with a token the server does not know
    /// is dropped without closing; a flood keeps at most ten at once, then one a second.
    @Test func hostileDeviceReportsKeepNothingOrAreBounded() async throws {
        try await withServer { server in
            // The ledger keeps entries of partitions the server has (a device bound it).
            _ = try await withConnection(server) { try await TestDevice(partition: "store-17").bind(on: $0) }
            let token = ServerProcess.tokens["pos-17"]!
            let escape = DeviceReport(
                token: token, deviceID: "evil", deviceName: "till\u{1b}]52;c;Y3VybCBldmls\u{7}", release: "0.1.0",
                entries: [.init(partition: "store-17", state: "synced")])
            let error = try await provoke(server) { raw in try await raw.send(.report(escape)) }
            #expect(error.code == .badSyntax)
            try await withRawConnection(server) { raw in
                try await raw.send(helloMessage)
                try await raw.send(.report(DeviceReport(
                    token: "not-a-token", deviceID: "stranger", deviceName: "x", release: "0.1.0",
                    entries: [.init(partition: "store-17", state: "synced")])))
                for n in 0..<50 {
                    try await raw.send(.report(DeviceReport(
                        token: token, deviceID: "flood-\(n)", deviceName: "x", release: "0.1.0",
                        entries: [.init(partition: "store-17", state: "synced")])))
                }
                try await raw.send(.ping(9))
                _ = try await raw.receive { if case .pong(9) = $0 { true } else { nil } }
            }
            let devices = try await server.admin.devices().devices.map(\.deviceID)
            #expect(!devices.contains("evil") && !devices.contains("stranger"))
            #expect((9...12).contains(devices.count), "\(devices.count) of 50 kept (the stranger's report took one of the ten)")
        }
    }

    @Test func pingIsAnsweredAndUnbindFreesTheSessionId() async throws {
        try await withServer { server in
            try await withRawConnection(server) { raw in
                try await raw.send(helloMessage)
                try await raw.send(.ping(77))
                _ = try await raw.receive { if case .pong(77) = $0 { true } else { nil } }
                let bind = BindRequest(session: 5, partition: "store-17", token: ServerProcess.tokens["pos-17"]!, identity: nil)
                try await raw.send(.bind(bind))
                _ = try await raw.receive { if case .state(let chunk) = $0, chunk.isLast { chunk } else { nil } }
                try await raw.send(.unbind(5))
                _ = try await raw.receive { if case .unbound(5) = $0 { true } else { nil } }
                try await raw.send(.bind(bind))
                let reply = try await raw.receive { if case .bound(let reply) = $0 { reply } else { nil } }
                #expect(reply.session == 5)
            }
        }
    }

    /// The compatibility rule on the real server: an agent of the previous protocol version is
    /// welcomed in its own version and syncs; one older than that (or, while the previous
    /// version is 0, a newer one: versions are unsigned on the wire) gets 105 naming both.
    @Test func previousProtocolVersionIsAcceptedAndOlderIsRefused() async throws {
        try await withServer { server in
            let previous = TetherVersion.syncProtocol - 1
            try await withRawConnection(server) { raw in
                try await raw.send(.hello(Hello(protocolVersion: previous, software: "tetherd (previous)")))
                let welcome = try await raw.receive { if case .welcome(let w) = $0 { w } else { nil } }
                #expect(welcome.protocolVersion == previous)
                let bind = BindRequest(session: 3, partition: "store-17", token: ServerProcess.tokens["pos-17"]!, identity: nil)
                try await raw.send(.bind(bind))
                let reply = try await raw.receive { if case .bound(let reply) = $0 { reply } else { nil } }
                #expect(reply.session == 3)
            }
            let refused = previous >= 1 ? previous - 1 : TetherVersion.syncProtocol + 1
            let error = try await provoke(server, hello: false) { raw in
                try await raw.send(.hello(Hello(protocolVersion: refused, software: "tetherd (incompatible)")))
            }
            #expect(error.code == .wrongProtocolVersion)
            #expect(error.message.contains("client speaks sync protocol \(refused)"))
            #expect(error.message.contains("server speaks sync protocol \(TetherVersion.syncProtocol)"))
        }
    }
}
