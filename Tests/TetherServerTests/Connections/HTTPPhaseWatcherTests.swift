import HTTPTypes
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing
@testable import TetherServer

/// ``HTTPPhaseWatcher`` between a ``ConnectionGuard`` and the routes: what it tells the guard,
/// and the bodies it refuses before any route reads them.
@Suite struct HTTPPhaseWatcherTests {
    static func pipeline(bodyLimit: Int = 4096) throws -> (EmbeddedChannel, ConnectionAdmission) {
        var limits = ConnectionGuardTests.limits(perConnection: 1 << 20, total: 1 << 20)
        limits.unauthenticatedBodyBytes = bodyLimit
        let admission = ConnectionGuardTests.admission(limits)
        let channel = try ConnectionGuardTests.channel(admission)
        try channel.pipeline.syncOperations.addHandler(
            HTTPPhaseWatcher(adminGate: AdminTokenGate(TokenDigest(token: "secret")), admission: admission))
        return (channel, admission)
    }

    /// Hands `part` to the watcher as the HTTP decoder would.
    static func receive(_ channel: EmbeddedChannel, _ part: HTTPRequestPart) throws {
        try channel.pipeline.syncOperations.context(handlerType: ConnectionGuard.self).fireChannelRead(NIOAny(part))
    }

    static func post(_ path: String, length: Int?, token: String? = nil) -> HTTPRequestPart {
        var fields = HTTPFields()
        if let length { fields[.contentLength] = "\(length)" }
        if let token { fields[.authorization] = "Bearer \(token)" }
        return .head(HTTPRequest(method: .post, scheme: nil, authority: "127.0.0.1", path: path, headerFields: fields))
    }

    @Test func aDeclaredBodyOverTheLimitIsAnswered413AndNeverHandedOn() throws {
        let (channel, _) = try Self.pipeline()
        try Self.receive(channel, Self.post("/console/sign-in", length: 65000))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == nil, "no route sees the request")
        guard case .head(let response) = try channel.readOutbound(as: HTTPResponsePart.self) else {
            Issue.record("no answer")
            return
        }
        #expect(response.status == .contentTooLarge)
        #expect(!channel.isActive)
    }

    @Test func aBodyWithinTheLimitOrAnAdminsIsHandedOn() throws {
        let (channel, _) = try Self.pipeline()
        try Self.receive(channel, Self.post("/healthz", length: 4096))
        try Self.receive(channel, .body(ByteBuffer(repeating: 0x61, count: 4096)))
        try Self.receive(channel, .end(nil))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) != nil)
        #expect(channel.isActive)
        let (admin, _) = try Self.pipeline()
        try Self.receive(admin, Self.post("/admin/grants", length: 1 << 20, token: "secret"))
        try Self.receive(admin, .body(ByteBuffer(repeating: 0x61, count: 1 << 20)))
        #expect(admin.isActive)
        let (wrongToken, _) = try Self.pipeline()
        try Self.receive(wrongToken, Self.post("/admin/grants", length: 1 << 20, token: "guess"))
        #expect(!wrongToken.isActive)
    }

    @Test func aChunkedBodyIsCutWhereItPassesTheLimit() throws {
        let (channel, admission) = try Self.pipeline(bodyLimit: 1000)
        try Self.receive(channel, Self.post("/healthz", length: nil))
        try Self.receive(channel, .body(ByteBuffer(repeating: 0x61, count: 600)))
        #expect(channel.isActive)
        try Self.receive(channel, .body(ByteBuffer(repeating: 0x61, count: 600)))
        #expect(!channel.isActive)
        #expect(admission.connectionCount == 0)
        _ = try channel.readInbound(as: HTTPRequestPart.self)  // the head
        _ = try channel.readInbound(as: HTTPRequestPart.self)  // the first 600
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == nil)
    }

    @Test func theForwardedForFieldsReachTheGuard() throws {
        var limits = ConnectionGuardTests.limits()
        limits.connectionsPerPeer = 1
        limits.trustedProxies = [AddressRange("127.0.0.2")!]
        let admission = ConnectionGuardTests.admission(limits)
        func request(_ forwarded: [String]) throws -> EmbeddedChannel {
            let channel = try ConnectionGuardTests.channel(admission, peer: "127.0.0.2")
            try channel.pipeline.syncOperations.addHandler(HTTPPhaseWatcher(adminGate: nil, admission: admission))
            var fields = HTTPFields()
            for value in forwarded { fields.append(HTTPField(name: HTTPPhaseWatcher.forwardedFor, value: value)) }
            try Self.receive(channel, .head(HTTPRequest(method: .get, scheme: nil, authority: "x", path: "/healthz", headerFields: fields)))
            return channel
        }
        let first = try request(["192.0.2.7"])
        // Two fields are one list: the right-most untrusted entry of the last is the client.
        let second = try request(["192.0.2.9", "192.0.2.7"])
        #expect(first.isActive && !second.isActive)
    }
}
