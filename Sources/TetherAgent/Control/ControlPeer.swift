import CTetherShims
import Foundation
import Glibc

/// The client at the other end of the control socket, as the kernel reports it.
struct ControlPeer: Sendable, Hashable {
    var pid: pid_t
    var uid: uid_t
    /// The primary group.
    var gid: gid_t
    /// The supplementary groups.
    var groups: [gid_t]

    func isMember(of group: gid_t) -> Bool { gid == group || groups.contains(group) }

    /// The credentials of the peer of the connected socket `fd`; nil when the kernel gives none.
    static func of(socket fd: Int32) -> ControlPeer? {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard tether_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        return ControlPeer(pid: pid, uid: uid, gid: gid, groups: supplementaryGroups(socket: fd, pid: pid))
    }

    /// The peer's supplementary groups. SO_PEERCRED carries only the primary group.
    ///
    /// `SO_PEERGROUPS` (Linux 4.13 and later) is the robust source: the kernel records the
    /// groups when the client connects, so they are the groups of the process that connected,
    /// whatever it did since. `/proc/<pid>/status` (`Groups:`) is read only on an older kernel
    /// (ENOPROTOOPT): it describes whatever process has that pid now, which may have changed
    /// its groups or exited and had its pid reused. `getgrouplist(3)` for the uid is not used:
    /// it says which groups the user database lists, not which the process holds (a process
    /// that dropped a group, or a uid without a passwd entry, would be judged wrongly).
    static func supplementaryGroups(socket fd: Int32, pid: pid_t) -> [gid_t] {
        var capacity = 64
        while capacity <= 1 << 17 {
            var groups = [gid_t](repeating: 0, count: capacity)
            let count = tether_peer_groups(fd, &groups, Int32(capacity))
            if count < 0 {
                return errno == ENOPROTOOPT ? procGroups(pid) : []
            }
            if Int(count) <= capacity { return Array(groups.prefix(Int(count))) }
            capacity = Int(count)
        }
        return []
    }

    /// The `Groups:` line of `/proc/<pid>/status` (kernels before 4.13). Unreadable (the peer
    /// exited): no groups, so the peer gets no more than its uid gives it — failing closed.
    private static func procGroups(_ pid: pid_t) -> [gid_t] {
        // Unreadable (the peer exited): no groups, failing closed.
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Groups:") })
        else { return [] }
        return line.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { gid_t($0) }
    }
}
