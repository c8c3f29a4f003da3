import Logging
import TetherControl
import TetherProtocol

extension SyncAgent {
    /// Runs a remote action the server sent (protocol 8; docs/operations.md "Remote actions")
    /// under the device's own rules (``RemoteActionDecision``) and through the control
    /// handler, as `tetherctl` would; one the server sends again is answered as before without
    /// running twice. Logged at notice and recorded as a `remote-action` event.
    func answer(_ action: RemoteAction) async -> RemoteActionResult {
        if let earlier = remoteActionMemory.result(for: action.id) {
            logger.info(
                "remote action \(action.id) (\(action.kind)) was answered already in this run; the same answer is sent again: \(earlier.outcome)",
                metadata: Self.remoteActionMetadata(action, earlier.outcome))
            return earlier
        }
        let accepted = await partitions.configuration().device.remoteActions
        let result: RemoteActionResult
        switch RemoteActionDecision.decide(action, accepted: accepted) {
        case .refuse(let message):
            result = RemoteActionResult(id: action.id, outcome: .refused, message: RemoteActionResult.sendable(message))
        case .run(let request):
            result = RemoteActionDecision.result(for: action, response: await handle(request))
        }
        remoteActionMemory.remember(result)
        let on = action.partition.map { " for \($0)" } ?? ""
        logger.notice(
            "remote action \(action.id) from the server: \(action.kind)\(on): \(result.outcome): \(result.message)",
            metadata: Self.remoteActionMetadata(action, result.outcome))
        var event = AgentEvent(.remoteAction, partition: action.partition, name: action.kind.rawValue, message: result.message, outcome: result.outcome.description)
        event.actionID = action.id
        events.emit(event)
        return result
    }

    /// `TETHER_REMOTE_ACTION_KIND`, `_ID`, `_PARTITION`, `_OUTCOME` in the journal (docs/logging.md).
    private static func remoteActionMetadata(_ action: RemoteAction, _ outcome: RemoteActionResult.Outcome) -> Logger.Metadata {
        var fields: Logger.Metadata = [
            "kind": .string(action.kind.rawValue), "id": .stringConvertible(action.id), "outcome": .string(outcome.description),
        ]
        if let partition = action.partition { fields["partition"] = .string(partition) }
        return ["tether.remote_action": .dictionary(fields)]
    }
}
