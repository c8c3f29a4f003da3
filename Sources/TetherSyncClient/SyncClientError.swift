import TetherProtocol

/// Why a client call failed.
package enum SyncClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server could not be reached, or the WebSocket upgrade failed (transient); `cause`
    /// tells which, by the type of the failure (not by its text).
    case unreachable(String, cause: UnreachableCause = .other)
    /// The TLS handshake failed: the server's certificate does not lead to a trusted root (the
    /// system's, or only `[server] ca_file`'s), does not name the host, or the two sides share
    /// no TLS version (transient: a renewed certificate or a fixed file may cure it).
    case tlsFailure(String)
    /// The server's certificate chain verified, but its public key is none of the pinned ones
    /// (transient: the server's key may be put back, or the pins updated at a reload).
    case serverKeyNotPinned(ServerKeyPinMismatch)
    /// The connection is closed; the connection-level error when there was one.
    case closed(SyncError?)
    /// The session's state does not allow the request (an upload before it is active, …).
    case refused(ClientSessionStateMachine.RequestRefusal)

    package var description: String {
        switch self {
        case .unreachable(let reason, _): "cannot reach the sync server: \(reason)"
        case .tlsFailure(let reason): "TLS handshake with the sync server failed: \(reason)"
        case .serverKeyNotPinned(let mismatch): "\(mismatch)"
        case .closed(let error?): "the sync connection closed: \(error)"
        case .closed(nil): "the sync connection is closed"
        case .refused(let refusal): "request refused: \(refusal)"
        }
    }

    /// Reconnecting later may succeed (everything but a connection-level error whose action says otherwise).
    package var isTransient: Bool {
        switch self {
        case .unreachable, .tlsFailure, .serverKeyNotPinned, .closed(nil): true
        case .closed(let error?): error.isTransient
        case .refused: false
        }
    }
}

/// The key a server showed when it was none of the pinned ones.
package struct ServerKeyPinMismatch: Sendable, Hashable, CustomStringConvertible {
    /// The server's host, as dialled.
    package var host: String
    /// The pin of the key the server's certificate carries.
    package var seen: ServerKeyPin
    /// The pins configured.
    package var expected: [ServerKeyPin]

    package init(host: String, seen: ServerKeyPin, expected: [ServerKeyPin]) {
        self.host = host
        self.seen = seen
        self.expected = expected
    }

    package var description: String {
        "the certificate of \(host) verified, but its public key \(seen.base64) is not in [server] pin_sha256 "
            + "(\(expected.map(\.base64).joined(separator: ", "))): if the server's key was replaced on purpose, "
            + "add its pin to pin_sha256 and reload; otherwise something else answers for \(host)"
    }
}
