import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

extension WebSocketDialer {
    /// A failed dial as a typed error: a TLS failure (untrusted or misnamed certificate, no
    /// common version) or a pin mismatch keeps its kind, anything else is unreachable, with
    /// its cause.
    static func failure(_ error: any Error, url: String) -> SyncClientError {
        switch error {
        case let error as SyncClientError: error
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError: .tlsFailure("\(url): \(error)")
        default: .unreachable("\(url): \(error)", cause: cause(of: error))
        }
    }

    /// What kept the dial from a WebSocket, by the error's type. Of several addresses tried
    /// (a name with IPv4 and IPv6 addresses), a refusal wins over a timeout, either over the rest.
    static func cause(of error: any Error) -> UnreachableCause {
        switch error {
        case let error as NIOConnectionError:
            if error.dnsAError != nil || error.dnsAAAAError != nil { return .nameResolution }
            let causes = Set(error.connectionErrors.map { cause(of: $0.error) })
            return causes.contains(.connectionRefused) ? .connectionRefused : causes.contains(.timedOut) ? .timedOut : .other
        case let error as IOError:
            switch error.errnoCode {
            case ECONNREFUSED: return .connectionRefused
            case ETIMEDOUT: return .timedOut
            default: return .other
            }
        case ChannelError.connectTimeout: return .timedOut
        case is SocketAddressError.UnknownHost: return .nameResolution
        case is DialError, is NIOHTTPClientUpgradeError, is NIOWebSocketUpgradeError: return .upgradeFailed
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError: return .tls
        default: return .other
        }
    }
}
