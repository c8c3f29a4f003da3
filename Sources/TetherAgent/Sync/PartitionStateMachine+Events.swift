import TetherProtocol
import TetherStore

/// What the machine is told (operator commands, the run loop's results) and what it asks the
/// controller to do.
extension PartitionStateMachine {
    enum Event: Sendable, Hashable {
        // The operator and the configuration (the pause and resume are persisted first).
        case pauseRequested
        case resumeRequested
        case removeRequested
        case reloaded
        /// `reset initiate` for a reset waiting for an operator.
        case initiateRequested
        /// `reset initiate` recorded a forced reset: it ends the session in flight.
        case resetForced(id: String)
        /// The agent's connection closed.
        case connectionLost
        // The run loop.
        case passStarted(pendingReset: PendingReset?)
        case bindSent
        case bound(stateFollows: Bool)
        /// The bind is complete (store bootstrapped or checked): uploads may flow.
        case sessionReady(caughtUp: Bool)
        /// Nothing unsynced and the server's latest version integrated, or not.
        case countsChanged(caughtUp: Bool)
        /// `boundFor`: how long the session had been bound (nil: never bound).
        case sessionEnded(SessionEnd, boundFor: Duration?)
        case resetStarted(id: String?)
        case resetEnded(ResetEnd)
        case quarantineFailed(reason: String)
    }

    enum Action: Sendable, Hashable {
        /// Bind a session and run it until it ends (``Event/sessionEnded(_:boundFor:)``).
        case bind
        /// Carry out the recorded reset; `initiate`: an operator's go (or the daemon's start).
        case driveReset(initiate: Bool)
        /// Start a reset for `error`, if ``ResetLoopGuard`` allows (``Event/resetEnded(_:)``).
        case startReset(SyncError)
        /// A manual reset of a store an application altered.
        case startAlteredStoreReset(StoreError)
        /// Move the damaged store aside (recorded as a reset), then bootstrap.
        case quarantine(StoreError)
        /// Wait for a wake (operator command, reload), then start the next pass.
        case waitForWake
        /// Sleep a backoff delay (no shorter than `floor`), or until woken; `newSeries`: the
        /// session was healthy, the backoff starts again from its first delay.
        case backOff(floor: Duration, newSeries: Bool)
        /// Sleep `delay`, or until woken.
        case sleep(Duration)
        /// Start the backoff from its first delay at the next failure.
        case resetBackoff
        /// Write the pause flag, the stop reason and the last error to the state database.
        case persistStatus
        /// Wake the run loop (and end the session in flight if ``sessionShouldEnd``).
        case wake
        /// Return from the run loop (removed, or the connection is gone).
        case exit
    }
}
