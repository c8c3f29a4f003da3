import Logging
import TetherControl
import TetherProtocol

/// What docs/contract.md "Sync errors" says to do about an error the server sent in a session:
/// how the session ends, and what is logged about it (once, with its code and hint). Pure:
/// the ``PartitionController`` records the error, logs the verdict and ends the session.
struct SessionErrorVerdict: Sendable, Equatable {
    let reaction: SyncErrorReaction
    let end: PartitionStateMachine.SessionEnd
    let level: Logger.Level
    let message: String
    let metadata: Logger.Metadata

    init(_ error: SyncError, partition: PartitionName) {
        reaction = SyncErrorReaction(error)
        var metadata: Logger.Metadata = ["tether.error_code": .stringConvertible(error.code.rawValue)]
        if error.code == .wrongProtocolVersion { metadata["message_id"] = .string(TetherMessageID.protocolMismatch.rawValue) }
        self.metadata = metadata
        let text = "error \(error.code.rawValue) (\(error.code.name)) on \(partition): \(error.message); \(error.hint)"
        switch reaction {
        case .retry:
            (level, message, end) = (.warning, text, .retry(error))
        case .reauthenticate:
            (level, message, end) = (.error, "\(text); the token file is read again before the next attempt", .retry(error))
        case .stop:
            (level, message, end) = (
                .error, "\(text); syncing stops until the configuration is reloaded",
                .stop(reason: "error \(error.code.rawValue): \(error.message)")
            )
        case .reset:
            (level, message, end) = (.error, text, .reset(error, storeEmptied: false))
        }
    }

    /// The error starts a reset: it is announced with that reset's id once the reset is recorded.
    var heldForItsReset: Bool { reaction == .reset }
}
