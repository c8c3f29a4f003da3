import TetherProtocol
import TetherStore

/// What each input of the machine asks its executor (``PartitionController``) to do: one type
/// per kind of input, holding only what that input can produce.
extension PartitionStateMachine {
    /// After an operator's command, a reload or a lost connection (never waits).
    enum CommandAction: Sendable, Hashable {
        /// Nothing changed (a resume of a partition that is not paused).
        case none
        /// Wake the run loop (and end the session in flight if ``sessionShouldEnd``).
        case wake
        /// Write the pause flag, the stop reason and the last error to the state database,
        /// then wake the run loop (a forced reset ends the session in flight).
        case persistStatusThenWake
    }

    /// The step of a pass (``passStarted(pendingReset:)``).
    enum PassAction: Sendable, Hashable {
        /// Bind a session and run it until it ends (``sessionEnded(_:boundFor:)``).
        case bind
        /// Carry out the recorded reset; `initiate`: an operator's go (or the daemon's start).
        /// Its end goes to ``resetEnded(_:)``.
        case driveReset(initiate: Bool)
        /// Wait for a wake (operator command, reload), then start the next pass.
        case waitForWake
        /// Return from the run loop (removed).
        case exit
    }

    /// After a session ended (``sessionEnded(_:boundFor:)``).
    enum SessionEndAction: Sendable, Hashable {
        /// Return from the run loop (the connection is gone).
        case exit
        /// Sleep a backoff delay (no shorter than `floor`), or until woken; `newSeries`: the
        /// session was healthy, the backoff starts again from its first delay.
        case backOff(floor: Duration, newSeries: Bool)
        /// Start a reset for `error`, if ``ResetLoopGuard`` allows (``resetEnded(_:)``).
        case startReset(SyncError)
        /// A manual reset of a store an application altered (``resetEnded(_:)``).
        case startAlteredStoreReset(StoreError)
        /// Move the damaged store aside (recorded as a reset), then bootstrap; when it cannot
        /// be moved, ``quarantineFailed(reason:)``.
        case quarantine(StoreError)
        /// Write the stop reason to the state database; the next pass stops.
        case persistStatus
        /// Nothing: the next pass decides (paused, removed, a forced reset).
        case nextPass
    }

    /// After a reset step (``resetEnded(_:)``).
    enum ResetEndAction: Sendable, Hashable {
        /// Start the backoff from its first delay at the next failure; the next pass binds.
        case resetBackoff
        /// Sleep a backoff delay (no shorter than `floor`), or until woken.
        case backOff(floor: Duration, newSeries: Bool)
        /// Sleep `delay` (a deferred reset), or until woken.
        case sleep(Duration)
        /// Nothing: the next pass waits for an operator.
        case nextPass
    }
}
