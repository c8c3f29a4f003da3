/// A sync error as the server reports it: a code, the action the device must take, a
/// message and an operator hint. Messages never contain tokens or row contents.
public struct SyncError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    public var code: SyncErrorCode
    public var action: ErrorAction
    public var message: String
    public var hint: String
    /// A server-suggested delay before retrying, in milliseconds, when it has one.
    public var retryAfterMilliseconds: Int?

    public init(
        _ code: SyncErrorCode, _ message: String, action: ErrorAction? = nil, hint: String? = nil,
        retryAfterMilliseconds: Int? = nil
    ) {
        self.code = code
        self.action = action ?? code.defaultAction
        self.message = message
        self.hint = hint ?? code.hint
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    public var isTransient: Bool { action.isTransient }
    public var needsReset: Bool { action.needsReset }

    public var description: String { "error \(code.rawValue) \(code.name): \(message) (hint: \(hint))" }
}
