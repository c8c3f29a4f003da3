import Foundation
import Glibc
import TetherControl

/// Who may do what on the control socket (docs/operations.md "Two roles on the control
/// socket"): root, the daemon's own user and members of the store group (the daemon's group)
/// may read — `status`, `resets`, `events`, `wait-synced`, `metrics`; changing commands
/// (``ControlRequest/Command/changesState``) need root, the daemon's own user or a member of the
/// operator group (`[control] operator_group`, default `tether-admin`). Members of the operator
/// group may read too.
struct ControlAccess: Sendable, Hashable {
    var daemonUID: uid_t
    var storeGroup: gid_t
    /// Nil: the configured operator group does not exist; only root and the daemon's user change.
    var operatorGroup: gid_t?
    /// How the operator group was configured, for messages.
    var operatorGroupName: String

    func mayConnect(_ peer: ControlPeer) -> Bool {
        mayChange(peer) || peer.isMember(of: storeGroup)
    }

    func mayChange(_ peer: ControlPeer) -> Bool {
        if peer.uid == 0 || peer.uid == daemonUID { return true }
        guard let operatorGroup else { return false }
        return peer.isMember(of: operatorGroup)
    }

    /// The answer to a reader's changing command (exit status 4).
    func refusal(_ command: ControlRequest.Command, peer: ControlPeer) -> ControlResponse {
        .failure(
            "permission denied: \(command.rawValue) changes the agent; uid \(peer.uid) may only read (changing commands need root, the daemon's user or membership of \(operatorGroupName))",
            exitCode: ControlResponse.permissionDeniedExitCode)
    }

    /// The gid of the configured operator group; nil when a group name is not in the group
    /// database (getgrnam_r).
    static func resolve(_ group: ControlSettings.OperatorGroup) -> gid_t? {
        switch group {
        case .id(let gid): return gid
        case .name(let name):
            var entry = Glibc.group()
            var result: UnsafeMutablePointer<Glibc.group>?
            var size = 4096
            while size <= 1 << 20 {
                var buffer = [CChar](repeating: 0, count: size)
                let code = getgrnam_r(name, &entry, &buffer, buffer.count, &result)
                if code == ERANGE {
                    size *= 2
                    continue
                }
                guard code == 0, let result else { return nil }
                return result.pointee.gr_gid
            }
            return nil
        }
    }
}
