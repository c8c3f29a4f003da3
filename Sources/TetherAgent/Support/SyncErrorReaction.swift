public import TetherProtocol

/// What a partition does about a sync error (docs/contract.md: Sync errors). The server's action decides, so a code
/// this build does not know still gets the handling the server asked for.
public enum SyncErrorReaction: Sendable, Hashable {
    /// Reconnect after a backoff (transient errors, 108, 201, unknown codes with `retry`).
    case retry
    /// Re-read the token file, then reconnect after a backoff (202, 203).
    case reauthenticate
    /// Stop the partition until the configuration is reloaded (105, 204).
    case stop
    /// Hand the error to the client-reset machinery (reset codes, 206).
    case reset

    public init(_ error: SyncError) {
        self = switch error.action {
        case .retry: .retry
        case .reauth: .reauthenticate
        case .fatal: .stop
        case .clientReset, .clientResetNoRecovery, .deleteStore: .reset
        }
    }

    /// Whether the condition concerns the whole connection (every partition) rather than one.
    public static func concernsConnection(_ error: SyncError) -> Bool {
        error.code.isConnectionLevel
    }
}
