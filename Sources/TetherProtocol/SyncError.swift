/// A sync error as the server reports it: a code, the action the device must take, a
/// message and an operator hint. Messages never contain tokens or row contents.
package struct SyncError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    package var code: SyncErrorCode
    package var action: ErrorAction
    package var message: String
    package var hint: String
    /// A server-suggested delay before retrying, in milliseconds, when it has one.
    package var retryAfterMilliseconds: Int?

    package init(
        _ code: SyncErrorCode, _ message: String, action: ErrorAction? = nil, hint: String? = nil,
        retryAfterMilliseconds: Int? = nil
    ) {
        self.code = code
        self.action = action ?? code.defaultAction
        self.message = message
        self.hint = hint ?? code.hint
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    package var isTransient: Bool { action.isTransient }
    package var needsReset: Bool { action.needsReset }

    package var description: String { "error \(code.rawValue) \(code.name): \(message) (hint: \(hint))" }
}
