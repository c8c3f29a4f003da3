import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import Testing
import TetherTestSupport
@testable import TetherSyncClient

/// Why a dial failed, told by the failure's type: each NIO, NIOSSL and upgrade error the
/// dialer can meet, and real dials on loopback that end in each cause.
@Suite struct WebSocketDialerTests {
    struct Unrelated: Error, CustomStringConvertible {
        var description: String { "connection refused, timed out, upgrade, TLS, name or service not known" }
    }

    @Test func eachErrorTypeHasItsCause() {
        #expect(WebSocketDialer.cause(of: IOError(errnoCode: ECONNREFUSED, reason: "connect")) == .connectionRefused)
        #expect(WebSocketDialer.cause(of: IOError(errnoCode: ETIMEDOUT, reason: "connect")) == .timedOut)
        #expect(WebSocketDialer.cause(of: IOError(errnoCode: EHOSTUNREACH, reason: "connect")) == .other)
        #expect(WebSocketDialer.cause(of: ChannelError.connectTimeout(.seconds(10))) == .timedOut)
        #expect(WebSocketDialer.cause(of: ChannelError.ioOnClosedChannel) == .other)
        #expect(WebSocketDialer.cause(of: WebSocketDialer.DialError.closedDuringUpgrade) == .upgradeFailed)
        #expect(WebSocketDialer.cause(of: WebSocketDialer.DialError.upgradeTimedOut(.seconds(10))) == .upgradeFailed)
        #expect(WebSocketDialer.cause(of: NIOHTTPClientUpgradeError.responseProtocolNotFound) == .upgradeFailed)
        #expect(WebSocketDialer.cause(of: NIOHTTPClientUpgradeError.upgraderDeniedUpgrade) == .upgradeFailed)
        #expect(WebSocketDialer.cause(of: NIOWebSocketUpgradeError.invalidUpgradeHeader) == .upgradeFailed)
        #expect(WebSocketDialer.cause(of: NIOSSLError.failedToLoadCertificate) == .tls)
        #expect(WebSocketDialer.cause(of: Unrelated()) == .other, "the text does not decide")
    }

    @Test func aFailedDialKeepsItsTextAndItsKind() {
        let url = "ws://127.0.0.1:1/sync"
        let refused = WebSocketDialer.failure(IOError(errnoCode: ECONNREFUSED, reason: "connect"), url: url)
        #expect(refused == .unreachable("\(url): \(IOError(errnoCode: ECONNREFUSED, reason: "connect"))", cause: .connectionRefused))
        #expect(refused.description == "cannot reach the sync server: \(url): \(IOError(errnoCode: ECONNREFUSED, reason: "connect"))")
        let handshake = WebSocketDialer.failure(NIOSSLError.handshakeFailed(.zeroReturn), url: url)
        guard case .tlsFailure = handshake else { Issue.record("\(handshake)"); return }
        #expect(WebSocketDialer.failure(SyncClientError.closed(nil), url: url) == .closed(nil), "a client error passes")
        #expect(WebSocketDialer.failure(Unrelated(), url: url) == .unreachable("\(url): \(Unrelated())", cause: .other))
    }

    // MARK: Real dials

    func dial(_ url: String) async -> SyncClientError? {
        do {
            try await SyncConnection.run(SyncClientConfiguration(url: url, keepAlive: nil), logger: Logger(label: "test")) { _ in }
            return nil
        } catch {
            return error as? SyncClientError
        }
    }

    @Test func aPortNobodyListensOnRefuses() async throws {
        let refusing = try LoopbackPort.refusing()
        defer { refusing.close() }
        let url = refusing.syncURL
        let error = await dial(url)
        guard case .unreachable(let reason, cause: .connectionRefused)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(reason.hasPrefix("\(url): "))
    }

    @Test func anUnknownHostIsANameResolutionFailure() async {
        let error = await dial("ws://nosuch.invalid:7800/sync")
        guard case .unreachable(_, cause: .nameResolution)? = error else { Issue.record("\(String(describing: error))"); return }
    }

    @Test func aURLThatCannotCarrySNIIsATLSMatterAndAMalformedOneIsNot() async {
        let ip = await dial("wss://127.0.0.1:7800/sync")
        #expect(ip == .unreachable("wss://127.0.0.1:7800/sync: use the server's host name with wss://, not an IP address (TLS sends it as SNI)", cause: .tls))
        let malformed = await dial("http://127.0.0.1:7800/sync")
        #expect(malformed == .unreachable("http://127.0.0.1:7800/sync is not a ws:// or wss:// URL", cause: .other))
    }

    /// An HTTP server that declines the upgrade, one that closes before answering, one that
    /// answers 101 without the WebSocket's headers: each an upgrade failure, with its text.
    @Test(arguments: [
        ("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n", "the WebSocket upgrade was refused"),
        (nil, "the server closed the connection before answering the WebSocket upgrade"),
        ("HTTP/1.1 101 Switching Protocols\r\nupgrade: something-else\r\nconnection: upgrade\r\n\r\n", nil),
    ] as [(String?, String?)])
    func anUpgradeThatFailsIsAnUpgradeFailure(answer: String?, text: String?) async throws {
        try await withAnsweringServer(answer) { port in
            let url = "ws://127.0.0.1:\(port)/sync"
            let error = await dial(url)
            guard case .unreachable(let reason, cause: .upgradeFailed)? = error else { Issue.record("\(String(describing: error))"); return }
            if let text { #expect(reason == "\(url): \(text)") }
        }
    }

    /// A loopback server that reads a request, writes `answer` (nothing: closes at once) and closes.
    func withAnsweringServer(_ answer: String?, _ body: (Int) async throws -> Void) async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let port = try #require(server.channel.localAddress?.port)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await server.executeThenClose { clients in
                    for try await client in clients {
                        try? await client.executeThenClose { inbound, outbound in
                            var requests = inbound.makeAsyncIterator()
                            _ = try await requests.next()
                            if let answer { try await outbound.write(ByteBuffer(string: answer)) }
                        }
                    }
                }
            }
            defer { group.cancelAll() }
            try await body(port)
        }
    }
}
