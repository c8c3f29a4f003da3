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
        limits.unauthenticatedBytesPerPeerSetting = total  // the shares have tests of their own
        return limits
    }

    /// A guarded connection from `peer` (a group of its own for each by default, so the
    /// shares do not get in the way).
    static func channel(_ admission: ConnectionAdmission, peer: String? = nil) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        let address = peer.flatMap { IPAddress($0) }
        let id = try #require(admission.admit(address.map { admission.group(of: $0).group } ?? nil))
        admission.register(id) { [channel] in channel.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.evicted) }
        let trusted = address.map { admission.limits.trustedProxies.holds($0) } ?? false
        try channel.pipeline.syncOperations.addHandler(
            ConnectionGuard(admission: admission, id: id, peer: peer ?? "10.0.0.1", proxy: trusted ? address : nil))
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
        try b.writeInbound(Self.bytes(200))  // 1600 > 1500 in all: a holds the most and goes
        #expect(b.isActive && !a.isActive)
        #expect(admission.unauthenticatedBytes == 700)
        try b.writeInbound(Self.bytes(300))
        _ = try b.finish()
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
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))  // answered within request_timeout_seconds (10)
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
        let a = admission.group(of: IPAddress("192.0.2.1")).group
        let b = admission.group(of: IPAddress("192.0.2.2")).group
        let first = admission.admit(a)
        #expect(first != nil && admission.admit(a) != nil)
        #expect(admission.admit(a) == nil)
        #expect(admission.admit(b) != nil)
        admission.leave(first!)
        #expect(admission.admit(a) != nil)
    }

    @Test func anUnauthenticatedRequestMustBeAnsweredInTime() throws {
        var limits = Self.limits()
        limits.requestTimeout = .seconds(5)
        let admission = Self.admission(limits)
        let slow = try Self.channel(admission)
        try slow.writeInbound(Self.bytes(100))
        slow.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.requestHead(authenticated: false))
        slow.embeddedEventLoop.advanceTime(by: .seconds(4))
        try slow.writeInbound(Self.bytes(10))  // a body dribbling in does not extend it
        slow.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!slow.isActive)
        #expect(admission.unauthenticatedBytes == 0)

        let answered = try Self.channel(admission)
        answered.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.requestHead(authenticated: false))
        answered.embeddedEventLoop.advanceTime(by: .seconds(4))
        answered.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.responseEnd)
        answered.embeddedEventLoop.advanceTime(by: .seconds(30))
        #expect(answered.isActive, "the idle timeout (60 s) follows the answer")

        let admin = try Self.channel(admission)
        admin.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.requestHead(authenticated: true))
        admin.embeddedEventLoop.advanceTime(by: .seconds(600))
        #expect(admin.isActive, "an admin's request is not timed")

        let upgraded = try Self.channel(admission)
        upgraded.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.requestHead(authenticated: false))
        upgraded.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.upgraded)
        upgraded.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.authenticated)
        upgraded.embeddedEventLoop.advanceTime(by: .seconds(600))
        #expect(upgraded.isActive, "a bound WebSocket is not timed")
    }

    @Test func aFullTotalClosesTheHogNotTheNewcomer() throws {
        var limits = Self.limits(perConnection: 1000, total: 4000)
        limits.unauthenticatedBytesPerPeerSetting = 3000
        let admission = Self.admission(limits)
        let hog = try (0..<3).map { _ in try Self.channel(admission, peer: "203.0.113.66") }
        for channel in hog { try channel.writeInbound(Self.bytes(1000)) }
        let other = try Self.channel(admission, peer: "192.0.2.2")
        try other.writeInbound(Self.bytes(1000))
        #expect(admission.unauthenticatedBytes == 4000)
        let device = try Self.channel(admission, peer: "198.51.100.1")
        try device.writeInbound(Self.bytes(300))
        #expect(device.isActive && other.isActive)
        #expect(hog.filter(\.isActive).count == 2)
        #expect(admission.unauthenticatedBytes == 3300)
        #expect(try device.readInbound(as: ByteBuffer.self)?.readableBytes == 300)
        // The hog itself cannot get more in.
        let more = try Self.channel(admission, peer: "203.0.113.66")
        try more.writeInbound(Self.bytes(800))
        #expect(!more.isActive)
        #expect(admission.connectionCount == 4)
    }

    @Test func aTrustedProxysForwardedForMovesTheConnectionToItsClient() throws {
        var limits = Self.limits()
        limits.connectionsPerPeer = 1
        limits.trustedProxies = [AddressRange("10.0.0.0/8")!]
        let admission = Self.admission(limits)
        let first = try Self.channel(admission, peer: "10.0.0.5")
        let second = try Self.channel(admission, peer: "10.0.0.5")
        first.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.requestHead(authenticated: false, forwardedFor: "192.0.2.7"))
        #expect(first.isActive)
        second.pipeline.fireUserInboundEventTriggered(
            ConnectionGuardEvent.requestHead(authenticated: false, forwardedFor: "203.0.113.1, 192.0.2.7, 10.3.3.3"))
        #expect(!second.isActive, "192.0.2.7's second connection")
        // From an untrusted peer the header is ignored.
        let direct = try Self.channel(admission, peer: "198.51.100.1")
        direct.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.requestHead(authenticated: false, forwardedFor: "192.0.2.8"))
        let again = try Self.channel(admission, peer: "10.0.0.6")
        again.pipeline.fireUserInboundEventTriggered(ConnectionGuardEvent.requestHead(authenticated: false, forwardedFor: "192.0.2.8"))
        #expect(direct.isActive && again.isActive)
    }

    @Test func aProxyHeaderNamesTheClientAndIsNotHandedOn() throws {
        var limits = Self.limits()
        limits.connectionsPerPeer = 1
        limits.trustedProxies = [AddressRange("10.0.0.0/8")!]
        limits.proxyProtocol = true
        let admission = Self.admission(limits)
        func proxied(_ bytes: [UInt8]) throws -> EmbeddedChannel {
            let channel = try Self.channel(admission, peer: "10.0.0.5")
            try channel.pipeline.syncOperations.addHandler(ProxyHeaderReader())
            // In two reads, the header split.
            try channel.writeInbound(ByteBuffer(bytes: bytes.prefix(10)))
            _ = try? channel.writeInbound(ByteBuffer(bytes: bytes.dropFirst(10)))  // closed already when refused
            return channel
        }
        let request = Array("GET /healthz HTTP/1.1\r\n".utf8)
        let a = try proxied(ProxyHeader.make(source: IPAddress("192.0.2.7")!) + request)
        #expect(a.isActive)
        #expect(try a.readInbound(as: ByteBuffer.self).map { Array($0.readableBytesView) } == request)
        #expect(try a.readInbound(as: ByteBuffer.self) == nil)
        let b = try proxied(ProxyHeader.make(source: IPAddress("192.0.2.7")!))
        #expect(!b.isActive, "192.0.2.7's second connection")
        let bad = try proxied(request)
        #expect(!bad.isActive)
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
