import TetherProtocol

/// Why a session stopped while it was binding, downloading or syncing, thrown to the code that
/// drives it (the partition's session, a reset's fetch). Not to be confused with
/// ``PartitionStateMachine/SessionEnd``, what the lifecycle makes of a session's end.
enum SessionInterruption: Error, Sendable {
    case serverError(SyncError)
    case disconnected(SyncError?)
    case unbound
}
