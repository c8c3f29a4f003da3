import Logging
import TetherControl
import TetherProtocol
import TetherStore

/// What a partition does about an error met in a session — the server's (an event, or thrown
/// by a download as ``SessionInterruption``) or its own (the store, the disk): how the session
/// ends, what is logged about it (once, with its code and hint), and what the partition shows
/// as its last error. The one path every session error takes (docs/contract.md "Sync errors"):
/// ``init(_:partition:)`` sorts what was thrown, a server's error goes on to
/// ``init(serverError:partition:)``, whose reaction follows the action the server sent (so a
/// code this build does not know still gets the handling the server asked for). Pure: the
/// session records, logs and ends as the verdict says.
struct SessionErrorVerdict: Sendable, Equatable {
    /// What the partition does about a server's error (the server's action decides).
    enum Reaction: Sendable, Hashable {
        /// Bind again after a backoff (transient errors, 108, 201, unknown codes with `retry`).
        case retry
        /// Re-read the token file, then bind again after a backoff (202, 203).
        case reauthenticate
        /// Stop the partition until the configuration is reloaded (105, 204).
        case stop
        /// Hand the error to the client-reset machinery (reset codes, 206).
        case reset

        init(_ action: ErrorAction) {
            self =
                switch action {
                case .retry: .retry
                case .reauth: .reauthenticate
                case .fatal: .stop
                case .clientReset, .clientResetNoRecovery, .deleteStore: .reset
                }
        }
    }

    /// A line of the journal.
    struct Entry: Sendable, Equatable {
        let level: Logger.Level
        let message: String
        var metadata: Logger.Metadata = [:]
    }

    let end: PartitionStateMachine.SessionEnd
    /// Logged once; nil when the end says enough (a disconnection, an unbind, a damaged or
    /// altered store, which the lifecycle logs as it handles them).
    let entry: Entry?
    /// Recorded and announced as the partition's last error.
    let shown: SyncError?
    /// The error starts a reset: it is announced with that reset's id once the reset is recorded.
    let heldForItsReset: Bool

    private init(_ end: PartitionStateMachine.SessionEnd, entry: Entry? = nil, shown: SyncError? = nil, heldForItsReset: Bool = false) {
        self.end = end
        self.entry = entry
        self.shown = shown
        self.heldForItsReset = heldForItsReset
    }

    /// An error thrown while a session handled an event (a bind's bootstrap, a download).
    init(_ error: any Error, partition: PartitionName) {
        switch error {
        case SessionInterruption.serverError(let error):
            self.init(serverError: error, partition: partition)
        case SessionInterruption.disconnected:
            self.init(.connectionLost)
        case SessionInterruption.unbound:
            self.init(.retry(nil))
        case let error as StoreError where error.isCorruption:
            self.init(.storeDamaged(error))
        case let error as StoreError where error.isSchemaAlteration:
            self.init(.storeAltered(error))
        case let error as StoreError where error.isSymbolicLink:
            // A symbolic link where the agent writes (the bootstrap's staging store, a store
            // made meanwhile): someone must look at it.
            self.init(
                .stop(reason: "\(error)"), entry: Entry(level: .error, message: "syncing of \(partition) stops until a reload: \(error); \(error.hint)"),
                shown: SyncError(.badClientFile, "\(error)", action: .fatal))
        case let error as DiskSpaceError:
            // A state download refused for lack of disk space: retried with backoff, the store unchanged.
            self.init(
                .retry(nil), entry: Entry(level: .error, message: "state download of \(partition) refused, retrying: \(error); \(error.hint)"),
                shown: error.shownAsSyncError)
        default:
            self.init(.retry(nil), entry: Entry(level: .error, message: "sync of \(partition) failed: \(error)"))
        }
    }

    /// An error the server sent in the session.
    init(serverError error: SyncError, partition: PartitionName) {
        var metadata: Logger.Metadata = ["tether.error_code": .stringConvertible(error.code.rawValue)]
        if error.code == .wrongProtocolVersion { metadata["message_id"] = .string(TetherMessageID.protocolMismatch.rawValue) }
        let text = "error \(error.code.rawValue) (\(error.code.name)) on \(partition): \(error.message); \(error.hint)"
        let (level, message, end): (Logger.Level, String, PartitionStateMachine.SessionEnd) =
            switch Reaction(error.action) {
            case .retry: (.warning, text, .retry(error))
            case .reauthenticate: (.error, "\(text); the token file is read again before the next attempt", .retry(error))
            case .stop: (.error, "\(text); syncing stops until the configuration is reloaded", .stop(reason: "error \(error.code.rawValue): \(error.message)"))
            case .reset: (.error, text, .reset(error, storeEmptied: false))
            }
        self.init(end, entry: Entry(level: level, message: message, metadata: metadata), shown: error, heldForItsReset: Reaction(error.action) == .reset)
    }
}
