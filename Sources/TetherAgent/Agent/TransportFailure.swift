import TetherProtocol
import TetherSyncClient

/// A failed connection attempt as the error hook and the event stream see it (docs/events.md,
/// `sync-error`): no code, action `transient`, named by the failure's type — the sync client
/// tells why no WebSocket could be opened (``UnreachableCause``), a TLS failure and a pinned key
/// that does not match are cases of their own — never by its text (a host name must not decide it).
enum TransportFailure {
    static func report(_ error: any Error) -> SyncErrorReport {
        switch error {
        case SyncClientError.closed(let reason?):
            SyncErrorReport(reason, partition: "", store: "")
        default:
            SyncErrorReport(partition: "", store: "", code: nil, name: name(of: error), message: "\(error)", action: "transient")
        }
    }

    /// The kind of transport failure (`connection_refused`, `timeout`, …).
    static func name(of error: any Error) -> String {
        switch error {
        case SyncClientError.serverKeyNotPinned: "pin_mismatch"
        case SyncClientError.tlsFailure: "tls_failure"
        case SyncClientError.unreachable(_, let cause): name(of: cause)
        default: "unreachable"
        }
    }

    static func name(of cause: UnreachableCause) -> String {
        switch cause {
        case .connectionRefused: "connection_refused"
        case .timedOut: "timeout"
        case .nameResolution: "name_resolution"
        case .upgradeFailed: "upgrade_failed"
        case .tls: "tls_failure"
        case .other: "unreachable"
        }
    }
}
