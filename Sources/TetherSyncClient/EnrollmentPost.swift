import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One HTTP/1.1 `POST` of a JSON body to a sync server's devices' listener (`/enroll`), over
/// the same transport the sync connection dials: a TCP connect with a timeout, for `https://`
/// TLS with the agent's ``ServerTrust`` (only `ca_file`'s CAs when given, the minimum
/// version) and the public key checked against `pin_sha256` by ``ServerKeyPinCheck`` right
/// behind the TLS handler, as for the WebSocket. The whole exchange has a deadline.
package struct EnrollmentPost: Sendable {
    /// The server's answer: its status, its body (at most ``maxAnswerBytes``), and its
    /// `Retry-After` in seconds when it gave one.
    package struct Answer: Sendable, Hashable {
        package var status: Int
        package var body: [UInt8]
        package var retryAfterSeconds: Int?

        package init(status: Int, body: [UInt8], retryAfterSeconds: Int? = nil) {
            self.status = status
            self.body = body
            self.retryAfterSeconds = retryAfterSeconds
        }
    }

    /// Where to post: `http://` or `https://`.
    package var url: String
    package var trust: ServerTrust
    /// The `User-Agent` (`tetherd 0.9.0`).
    package var software: String
    package var connectTimeout: Duration = .seconds(10)
    /// The whole exchange, connect included.
    package var deadline: Duration = .seconds(30)
    package static let maxAnswerBytes = 65_536

    package init(url: String, trust: ServerTrust, software: String) {
        self.url = url
        self.trust = trust
        self.software = software
    }

    /// The enrollment URL of a sync URL: `ws`→`http`, `wss`→`https`, and the path's last
    /// `/sync` replaced by `/enroll` (a server behind a proxy's path prefix keeps its prefix);
    /// an `http(s)://` URL is taken as the server's base the same way. Nil when it is neither.
    package static func enrollURL(forServer server: String) -> String? {
        guard var components = URLComponents(string: server), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else { return nil }
        switch scheme {
        case "ws", "http": components.scheme = "http"
        case "wss", "https": components.scheme = "https"
        default: return nil
        }
        var path = components.path
        while path.hasSuffix("/") { path.removeLast() }
        if path.hasSuffix("/sync") { path.removeLast("/sync".count) }
        components.path = path + "/enroll"
        components.query = nil
        components.fragment = nil
        return components.string
    }

    /// Posts `body` (JSON) and returns the answer, whatever its status. Throws
    /// ``SyncClientError`` when no answer came: unreachable (refused, timed out, closed before
    /// a complete answer, an answer that is not HTTP), a TLS failure, a key that is not pinned.
    package func send(_ body: [UInt8]) async throws(SyncClientError) -> Answer {
        let target = try ServerTarget(url: url, plain: "http", secure: "https")
        let sslContext: NIOSSLContext?
        do {
            sslContext = try target.secure ? NIOSSLContext(configuration: trust.tlsConfiguration) : nil
        } catch {
            throw .unreachable("\(url): cannot set up TLS: \(error)", cause: .tls)
        }
        let pins = trust.pinnedKeys
        let timedOut = NIOLockedValueBox(false)
        do {
            let (channel, refusal) = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(TimeAmount(connectTimeout))
                .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                .connect(host: target.host, port: target.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        var refusal: EventLoopFuture<Void>? = nil
                        if let sslContext {
                            try channel.pipeline.syncOperations.addHandler(
                                try NIOSSLClientHandler(context: sslContext, serverHostname: target.host))
                            if !pins.isEmpty {
                                let check = ServerKeyPinCheck(pins: pins, host: target.host, eventLoop: channel.eventLoop)
                                try channel.pipeline.syncOperations.addHandler(check)
                                refusal = check.verdict
                            }
                        }
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        let wrapped = try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                        return (wrapped, refusal)
                    }
                }
            let timer = channel.channel.eventLoop.scheduleTask(in: TimeAmount(deadline)) {
                timedOut.withLockedValue { $0 = true }
                channel.channel.close(promise: nil)
            }
            defer { timer.cancel() }
            do {
                return try await exchange(channel, target: target, body: body)
            } catch {
                // The pin check's verdict names a refused key; the closed channel says less.
                if let refusal {
                    do {
                        try await refusal.get()
                    } catch let refused as SyncClientError {
                        throw refused
                    } catch {
                        // Closed without a verdict: the exchange's own error says what happened.
                    }
                }
                throw error
            }
        } catch {
            if timedOut.withLockedValue({ $0 }) {
                throw .unreachable("\(url): no complete answer within \(deadline)", cause: .timedOut)
            }
            throw WebSocketDialer.failure(error, url: url)
        }
    }

    private func exchange(
        _ channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>, target: ServerTarget, body: [UInt8]
    ) async throws -> Answer {
        try await channel.executeThenClose { inbound, outbound in
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: target.hostHeader)
            headers.add(name: "User-Agent", value: software)
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Accept", value: "application/json")
            headers.add(name: "Content-Length", value: "\(body.count)")
            headers.add(name: "Connection", value: "close")
            // One write: a server may answer (and close) as soon as it has the body, before a
            // separate write of the request's end would go out. A write that fails still lets
            // an answer already received be read; without one, its error is the outcome.
            var writeFailure: (any Error)? = nil
            do {
                try await outbound.write(contentsOf: [
                    .head(HTTPRequestHead(version: .http1_1, method: .POST, uri: target.path, headers: headers)),
                    .body(.byteBuffer(ByteBuffer(bytes: body))), .end(nil),
                ])
            } catch {
                writeFailure = error
            }
            var head: HTTPResponseHead? = nil
            var received = ByteBuffer()
            for try await part in inbound {
                switch part {
                case .head(let answer):
                    // 1xx answers (100 Continue) precede the real one.
                    if answer.status.code >= 200 { head = answer }
                case .body(var chunk):
                    guard received.readableBytes + chunk.readableBytes <= Self.maxAnswerBytes else {
                        throw SyncClientError.unreachable("\(url): the answer is larger than \(Self.maxAnswerBytes) bytes", cause: .other)
                    }
                    received.writeBuffer(&chunk)
                case .end:
                    guard let head else { continue }
                    let retryAfter = head.headers.first(name: "Retry-After").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
                    return Answer(status: Int(head.status.code), body: Array(received.readableBytesView), retryAfterSeconds: retryAfter)
                }
            }
            if let writeFailure { throw writeFailure }
            throw SyncClientError.unreachable("\(url): the server closed the connection before a complete answer", cause: .other)
        }
    }
}
