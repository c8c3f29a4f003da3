import TetherProtocol
import TetherStore

/// How an error thrown while a session handled an event (a bind's bootstrap, a download) ends
/// the session. Pure: the ``PartitionController`` logs, records and ends the session as each
/// case says.
enum SessionFailure {
    /// Ends the session so: the server interrupted it, or the store is damaged or altered.
    case ends(PartitionStateMachine.SessionEnd)
    /// The server sent an error: judged by ``SessionErrorVerdict``.
    case serverError(SyncError)
    /// A symbolic link where the agent writes (the bootstrap's staging store, a store made
    /// meanwhile): someone must look at it. Stopped, with the error shown.
    case symbolicLink(StoreError)
    /// A state download refused for lack of disk space: shown as the partition's last error,
    /// retried with backoff, the store unchanged.
    case downloadRefused(DiskSpaceError)
    /// Anything else: logged, and bound again with backoff.
    case other(any Error)

    init(_ error: any Error) {
        switch error {
        case let interruption as SessionInterruption:
            self =
                switch interruption {
                case .serverError(let error): .serverError(error)
                case .disconnected: .ends(.connectionLost)
                case .unbound: .ends(.retry(nil))
                }
        case let error as StoreError where error.isCorruption: self = .ends(.storeDamaged(error))
        case let error as StoreError where error.isSchemaAlteration: self = .ends(.storeAltered(error))
        case let error as StoreError where error.isSymbolicLink: self = .symbolicLink(error)
        case let error as DiskSpaceError: self = .downloadRefused(error)
        default: self = .other(error)
        }
    }
}
