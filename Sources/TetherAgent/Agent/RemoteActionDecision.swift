import TetherControl
import TetherProtocol

/// What the agent does with a remote action the server sent (protocol 8; docs/operations.md
/// "Remote actions"), decided without I/O: refused by the device's own rules, or run as the
/// control request `tetherctl` would send — through the same handler, so that a remote action
/// can do nothing the device's operator could not.
enum RemoteActionDecision: Sendable, Hashable {
    /// Not run: the answer's message (outcome `refused`).
    case refuse(String)
    /// Run `request` through the control handler; its answer becomes the result
    /// (``result(for:response:)``).
    case run(ControlRequest)

    /// Refused when the kind is unknown to this build, not in `[device] remote_actions`
    /// (`accepted`), or without the partition it needs or with an illegal one; otherwise the
    /// control request of the same meaning.
    static func decide(_ action: RemoteAction, accepted: [RemoteActionKind]) -> RemoteActionDecision {
        let kind = action.kind
        guard kind.isKnown else {
            return .refuse("unknown action \(kind.rawValue.debugDescription): tetherd \(TetherVersion.release) does not know it")
        }
        guard accepted.contains(kind) else {
            return .refuse("this device does not accept remote \(kind) ([device] remote_actions)")
        }
        if let partition = action.partition, PartitionName(partition) == nil {
            return .refuse("illegal partition name \(partition.debugDescription)")
        }
        let command: ControlRequest.Command
        switch kind {
        case .initiateReset: command = .resetInitiate
        case .pause: command = .pause
        case .resume: command = .resume
        case .retryNow: command = .retryNow
        default:
            guard action.partition == nil else { return .refuse("\(kind) concerns the whole agent and takes no partition") }
            command = .diagnostics
        }
        if kind.needsPartition, action.partition == nil {
            return .refuse("\(kind) needs a partition")
        }
        return .run(ControlRequest(command: command, partition: action.partition, protocol: ControlProtocol.version))
    }
}
