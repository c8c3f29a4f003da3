/// Why a message could not be decoded. Each case maps to the protocol error the receiver
/// answers with: 102 unknown message, 103 bad syntax, 104 limits exceeded.
package enum WireDecodeError: Error, Sendable, Hashable, CustomStringConvertible {
    case emptyMessage
    case unknownMessageType(UInt8)
    case truncated(field: String)
    case malformed(field: String, reason: String)
    case limitExceeded(field: String, limit: Int)
    case messageTooLarge(size: Int, limit: Int)
    case trailingBytes(count: Int)
    /// A text frame, or anything else that is not a binary protocol message.
    case notBinary

    package var code: SyncErrorCode {
        switch self {
        case .unknownMessageType: .unknownMessage
        case .limitExceeded, .messageTooLarge: .limitsExceeded
        case .emptyMessage, .truncated, .malformed, .trailingBytes, .notBinary: .badSyntax
        }
    }

    package var description: String {
        switch self {
        case .emptyMessage: "empty message"
        case .unknownMessageType(let t): "unknown message type 0x\(String(t, radix: 16))"
        case .truncated(let field): "message truncated in \(field)"
        case .malformed(let field, let reason): "malformed \(field): \(reason)"
        case .limitExceeded(let field, let limit): "\(field) exceeds the limit of \(limit)"
        case .messageTooLarge(let size, let limit): "message of \(size) bytes exceeds the limit of \(limit) bytes"
        case .trailingBytes(let count): "\(count) unexpected bytes after the message"
        case .notBinary: "expected a binary WebSocket message"
        }
    }

    /// The protocol error to send back (connection-level: the connection is then closed).
    package var syncError: SyncError { SyncError(code, description) }
}
