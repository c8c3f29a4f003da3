/// Joins WebSocket frames into protocol messages, refusing text frames, stray
/// continuations and messages over the size limit before buffering them.
package struct MessageAssembler: Sendable {
    package enum FrameKind: Sendable, Hashable {
        case binary, text, continuation
    }

    package enum Output: Sendable, Hashable {
        /// The frame was buffered; the message continues.
        case incomplete
        case message([UInt8])
        case failure(WireDecodeError)
    }

    package let limit: Int
    private var buffer: [UInt8]? = nil

    package init(limit: Int = ProtocolLimits.maxMessageBytes) {
        self.limit = limit
    }

    package mutating func append(_ kind: FrameKind, _ bytes: some Collection<UInt8>, fin: Bool) -> Output {
        switch kind {
        case .text:
            buffer = nil
            return .failure(.notBinary)
        case .binary:
            guard buffer == nil else {
                buffer = nil
                return .failure(.malformed(field: "frame", reason: "a new message started before the previous one ended"))
            }
            buffer = []
        case .continuation:
            guard buffer != nil else {
                return .failure(.malformed(field: "frame", reason: "a continuation frame without a message"))
            }
        }
        let size = buffer!.count + bytes.count
        guard size <= limit else {
            buffer = nil
            return .failure(.messageTooLarge(size: size, limit: limit))
        }
        buffer!.append(contentsOf: bytes)
        guard fin else { return .incomplete }
        defer { buffer = nil }
        return .message(buffer!)
    }
}
