import TetherProtocol
import TetherStore
@testable import TetherAgent

/// Every input of ``PartitionStateMachine`` as a value and every action its inputs return as
/// one list, so the pair tests can feed each input in each phase from one table. The machine
/// itself has one method per input, each returning only its own kind of action.
extension PartitionStateMachine {
    enum TestInput: Sendable, Hashable {
        case pauseRequested
        case resumeRequested
        case removeRequested
        case reloaded
        case initiateRequested
        case resetForced(id: String)
        case rebindRequested
        case connectionLost
        case passStarted(pendingReset: PendingReset?)
        case bindSent
        case bound(stateFollows: Bool)
        case sessionReady(caughtUp: Bool)
        case countsChanged(caughtUp: Bool)
        case sessionEnded(SessionEnd, boundFor: Duration?)
        case resetStarted(id: String)
        case resetEnded(ResetEnd)
        case quarantineFailed(reason: String)
    }

    /// What the executor does, whichever input asked for it.
    enum TestAction: Sendable, Hashable {
        case bind
        case driveReset(initiate: Bool)
        case startReset(SyncError)
        case startAlteredStoreReset(StoreError)
        case quarantine(StoreError)
        case waitForWake
        case backOff(floor: Duration, newSeries: Bool)
        case sleep(Duration)
        case resetBackoff
        case persistStatus
        case wake
        case exit
    }

    /// Calls the method for `input`; its actions, in the order the executor performs them.
    mutating func handle(_ input: TestInput) -> [TestAction] {
        switch input {
        case .pauseRequested: return Self.actions(pauseRequested())
        case .resumeRequested: return Self.actions(resumeRequested())
        case .removeRequested: return Self.actions(removeRequested())
        case .reloaded: return Self.actions(reloaded())
        case .initiateRequested: return Self.actions(initiateRequested())
        case .resetForced(let id): return Self.actions(resetForced(id: id))
        case .rebindRequested: return Self.actions(rebindRequested())
        case .connectionLost:
            connectionLost()
            return []
        case .passStarted(let reset):
            return switch passStarted(pendingReset: reset) {
            case .bind: [.bind]
            case .driveReset(let initiate): [.driveReset(initiate: initiate)]
            case .waitForWake: [.waitForWake]
            case .exit: [.exit]
            }
        case .bindSent:
            bindSent()
            return []
        case .bound(let stateFollows):
            bound(stateFollows: stateFollows)
            return []
        case .sessionReady(let caughtUp):
            sessionReady(caughtUp: caughtUp)
            return []
        case .countsChanged(let caughtUp):
            countsChanged(caughtUp: caughtUp)
            return []
        case .sessionEnded(let end, let boundFor):
            return switch sessionEnded(end, boundFor: boundFor) {
            case .exit: [.exit]
            case .backOff(let floor, let newSeries): [.backOff(floor: floor, newSeries: newSeries)]
            case .startReset(let error): [.startReset(error)]
            case .startAlteredStoreReset(let alteration): [.startAlteredStoreReset(alteration)]
            case .quarantine(let problem): [.quarantine(problem)]
            case .persistStatus: [.persistStatus]
            case .nextPass: []
            }
        case .resetStarted(let id):
            resetStarted(id: id)
            return []
        case .resetEnded(let end):
            return switch resetEnded(end) {
            case .resetBackoff: [.resetBackoff]
            case .backOff(let floor, let newSeries): [.backOff(floor: floor, newSeries: newSeries)]
            case .sleep(let delay): [.sleep(delay)]
            case .nextPass: []
            }
        case .quarantineFailed(let reason):
            quarantineFailed(reason: reason)
            return []  // the executor persists the stop
        }
    }

    private static func actions(_ action: CommandAction) -> [TestAction] {
        switch action {
        case .none: []
        case .wake: [.wake]
        case .persistStatusThenWake: [.persistStatus, .wake]
        }
    }
}
