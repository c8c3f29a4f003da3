import Logging
import NIOCore
import NIOEmbedded
import Testing
@testable import TetherServer

/// ``ConnectionGuard`` on an embedded channel: byte budgets, timers and the events that lift
/// them, without a network.
@Suite struct ConnectionGuardTests {
    static func limits(
        perConnection: Int = 1000, total: Int = 1500, header: Duration = .seconds(10), idle: Duration = .seconds(60),
        auth: Duration = .seconds(10)
    ) -> ConnectionLimits {
        var limits = ConnectionLimits()
        limits.unauthenticatedBytes = perConnection
        limits.unauthenticatedBytesTotal = total
        limits.headerTimeout = header
        limits.idleTimeout = idle
        limits.authTimeout = auth
        return limits
    }

    static func channel(_ admission: ConnectionAdmission) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ConnectionGuard(admission: admission, peer: "10.0.0.1"))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    static func admission(_ limits: ConnectionLimits) -> ConnectionAdmission {
        ConnectionAdmission(limits: limits, metrics: ServerMetrics(), logger: Logger(label: "test"))
    }

    static func bytes(_ count: Int) -> ByteBuffer { ByteBuffer(repeating: 0x41, count: count) }

    @Test func aConnectionPastItsUnauthenticatedBudgetIsClosed() throws {
        let admission = Self.admission(Self.limits())
        let channel = try Self.channel(admission)
        try channel.writeInbound(Self.bytes(900))
        #expect(channel.isActive)
        #expect(admission.unauthenticatedBytes == 900)
        try channel.writeInbound(Self.bytes(200))
        #expect(!channel.isActive)
        #expect(admission.unauthenticatedBytes == 0, "a closed connection gives its bytes back")
        // What passed the budget was not handed on.
        let passed: ByteBuffer? = try channel.readInbound()
        #expect(passed?.readableBytes == 900)
        #expect(try channel.readInbound(as: ByteBuffer.self) == nil)
    }

    @Test func theBudgetOfAllIsSharedAndGivenBackOnClose() throws {
        let admission = Self.admission(Self.limits())
        let a = try Self.channel(admission)
        let b = try Self.channel(admission)
        try a.writeInbound(Self.bytes(900))
        try b.writeInbound(Self.bytes(500))
        #expect(b.isActive)
        try b.writeInbound(Self.bytes(200))  // 1600 > 1500 in all
        #expect(!b.isActive)
        _ = try a.finish()
        #expect(admission.unauthenticatedBytes == 0)
    }

    @Test func anAuthenticatedConnectionIsNoLongerCounted() throws {
        let admission = Self.admission(Self.limits())
        let channel = try Self.channel(admission)
        channel.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.upgraded)
        try channel.writeInbound(Self.bytes(800))
        channel.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.authenticated)
        #expect(admission.unauthenticatedBytes == 0)
        for _ in 0..<10 { try channel.writeInbound(Self.bytes(800)) }
        #expect(channel.isActive)
    }

    @Test func anAnsweredRequestGivesItsBytesBack() throws {
        let admission = Self.admission(Self.limits())
        let channel = try Self.channel(admission)
        for _ in 0..<5 {
            try channel.writeInbound(Self.bytes(600))
            channel.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.requestHead(authenticated: false))
            channel.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.responseEnd)
        }
        #expect(channel.isActive, "3000 bytes in five answered requests of 600")
        #expect(admission.unauthenticatedBytes == 0)
    }

    @Test func theHeaderTimeoutClosesAConnectionWithoutACompleteHead() throws {
        let channel = try Self.channel(Self.admission(Self.limits(header: .seconds(5))))
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        try channel.writeInbound(Self.bytes(10))  // dribbling does not reset it
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
    }

    @Test func aHeadInTimeThenTheIdleTimeoutThenTheHeaderTimeoutAgain() throws {
        let channel = try Self.channel(Self.admission(Self.limits(header: .seconds(5), idle: .seconds(30))))
        channel.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.requestHead(authenticated: false))
        channel.embeddedEventLoop.advanceTime(by: .seconds(100))  // a long answer is not timed
        #expect(channel.isActive)
        channel.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.responseEnd)
        channel.embeddedEventLoop.advanceTime(by: .seconds(20))
        #expect(channel.isActive)
        try channel.writeInbound(Self.bytes(10))  // the next request starts: 5 s for its head
        channel.embeddedEventLoop.advanceTime(by: .seconds(6))
        #expect(!channel.isActive)

        let idle = try Self.channel(Self.admission(Self.limits(header: .seconds(5), idle: .seconds(30))))
        idle.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.requestHead(authenticated: false))
        idle.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.responseEnd)
        idle.embeddedEventLoop.advanceTime(by: .seconds(31))
        #expect(!idle.isActive)
    }

    @Test func anUpgradedConnectionMustAuthenticateInTime() throws {
        let late = try Self.channel(Self.admission(Self.limits(auth: .seconds(3))))
        late.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.upgraded)
        late.embeddedEventLoop.advanceTime(by: .seconds(4))
        #expect(!late.isActive)

        let bound = try Self.channel(Self.admission(Self.limits(auth: .seconds(3))))
        bound.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.upgraded)
        bound.embeddedEventLoop.advanceTime(by: .seconds(2))
        bound.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.authenticated)
        bound.embeddedEventLoop.advanceTime(by: .seconds(3600))
        #expect(bound.isActive)
    }

    @Test func anAdminHeadWithTheTokenLiftsTheBudget() throws {
        let admission = Self.admission(Self.limits())
        let channel = try Self.channel(admission)
        try channel.writeInbound(Self.bytes(500))
        channel.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.requestHead(authenticated: true))
        for _ in 0..<10 { try channel.writeInbound(Self.bytes(900)) }
        #expect(channel.isActive)
        #expect(admission.unauthenticatedBytes == 0)
    }

    @Test func peersAreCountedAndReleased() {
        var limits = Self.limits()
        limits.connectionsPerPeer = 2
        let admission = Self.admission(limits)
        #expect(admission.admit(peer: "a") && admission.admit(peer: "a"))
        #expect(!admission.admit(peer: "a"))
        #expect(admission.admit(peer: "b"))
        admission.leave(peer: "a")
        #expect(admission.admit(peer: "a"))
    }

    @Test func theAdminGateComparesTheBearerToken() {
        let gate = AdminTokenGate(TokenDigest(token: "secret"))
        #expect(gate.accepts(authorization: "Bearer secret"))
        #expect(!gate.accepts(authorization: "Bearer other"))
        #expect(!gate.accepts(authorization: "secret"))
        #expect(!gate.accepts(authorization: nil))
        gate.replace(TokenDigest(token: "new"))
        #expect(gate.accepts(authorization: "Bearer new") && !gate.accepts(authorization: "Bearer secret"))
    }
}
