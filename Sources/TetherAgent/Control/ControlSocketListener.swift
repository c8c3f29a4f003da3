import Foundation
import CTetherShims
import Glibc
import TetherControl

/// The listening side of the control socket. Its thread only accepts, checks the peer with
/// `SO_PEERCRED` and `SO_PEERGROUPS` (``ControlAccess``: root, the daemon's user, a member of
/// the daemon's group or of the operator group) and notes whether it may change; each client
/// is then read on a thread of its own, under a deadline for the whole request
/// (``requestTimeout``, however slowly the bytes come), and answered on another
/// (``ControlConnection/respond(_:)``, under a deadline too). So a slow client costs only its
/// own thread, and ``ControlClientBudget`` bounds how many such threads there are.
///
/// Why threads and poll(2), not SwiftNIO: the peer's credentials need the raw descriptor
/// (NIO cannot report them), and a blocking read or write must never run on a Swift
/// concurrency thread (a few slow clients would stall every task of the agent). Handing the
/// accepted descriptor to NIO (`NIOPipeBootstrap`) would work for the reads, but the event
/// followers (``EventFollowers``) write on threads of their own and the half-close after an
/// answer needs the descriptor too; one small blocking-I/O design for all of it is simpler
/// to reason about than two.
final class ControlSocketListener: Sendable {
    static let maxRequestBytes = 64 * 1024
    /// How long a client may take to send its whole request line, from when it is accepted.
    static let requestTimeout: Duration = .seconds(5)
    /// The send timeout of each write of an event follower (``EventFollowers``).
    static let followerSendTimeoutSeconds = 5

    let path: String
    private let fd: Int32
    let access: ControlAccess
    let budget: ControlClientBudget

    /// Creates the socket at `path` (replacing a stale socket, never another kind of file),
    /// mode 0660, group `group` (the daemon's group by default). `operatorGroup`: the gid whose
    /// members may change (nil: none), `operatorGroupName` how it was configured.
    init(
        path: String, group: gid_t = getegid(), operatorGroup: gid_t? = nil,
        operatorGroupName: String = ControlSettings.OperatorGroup.name(ControlSettings.defaultOperatorGroup).description,
        budget: ControlClientBudget = ControlClientBudget()
    ) throws(ControlSocketError) {
        self.path = path
        self.budget = budget
        self.access = ControlAccess(daemonUID: geteuid(), storeGroup: group, operatorGroup: operatorGroup, operatorGroupName: operatorGroupName)
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path: path) }
            unlink(path)
        }
        guard var address = UnixSocketAddress.make(path) else { throw .pathTooLong(path: path) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(path: path, call: "socket", errno: errno) }
        // The socket file is created with the umask applied; 0660 is set right after bind.
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            let error = errno
            close(fd)
            throw .system(path: path, call: "bind", errno: error)
        }
        guard chmod(path, 0o660) == 0, chown(path, uid_t.max, group) == 0 || geteuid() != 0, listen(fd, 64) == 0 else {
            let error = errno
            close(fd)
            unlink(path)
            throw .system(path: path, call: "chmod/listen", errno: error)
        }
        self.fd = fd
    }

    /// Accepts until ``shutdown()``; yields every permitted connection with its request read
    /// (each read on a thread of its own). Runs on its own thread and never waits for a client.
    func acceptLoop(_ connections: AsyncStream<ControlConnection>.Continuation, onRefused: @escaping @Sendable (String) -> Void) {
        defer { connections.finish() }
        while true {
            let client = tether_accept_cloexec(fd)
            if client < 0 {
                switch errno {
                case EINTR, ECONNABORTED: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors or memory (a flood): the backlog waits; try again soon.
                    usleep(50_000)
                    continue
                default: return  // shut down (EINVAL) or a fatal error
                }
            }
            var timeout = timeval(tv_sec: Self.followerSendTimeoutSeconds, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            guard let peer = ControlPeer.of(socket: client) else {
                close(client)
                continue
            }
            guard budget.tryTake() else {
                ControlConnection.refuse(
                    client,
                    .failure(
                        "tetherd is busy: \(budget.limit) control clients are being read or answered already; try again",
                        code: .unavailable))
                continue
            }
            guard access.mayConnect(peer) else {
                onRefused("control socket: refused uid \(peer.uid) (pid \(peer.pid)): not root, the daemon's user or a member of its group or of \(access.operatorGroupName)")
                let denied = ControlResponse.failure(
                    "permission denied: uid \(peer.uid) may not use this control socket", exitCode: ControlResponse.permissionDeniedExitCode)
                serve(client) { ControlConnection.answer(client, ControlConnection.line(denied), deadline: .now + ControlConnection.answerTimeout) }
                continue
            }
            let mayChange = access.mayChange(peer)
            serve(client) { [budget] in
                let deadline = ContinuousClock.now + Self.requestTimeout
                guard let request = Self.readRequest(client, deadline: deadline) else {
                    onRefused("control socket: closed a client of uid \(peer.uid) (pid \(peer.pid)) that sent no complete request within \(Self.requestTimeout.components.seconds) s")
                    ControlConnection.refuse(
                        client, .failure("no complete request within \(Self.requestTimeout.components.seconds) s; closing", exitCode: 2))
                    return
                }
                // The answer takes a slot of its own (respond): this one is free while the
                // handler works.
                let connection = ControlConnection(fd: client, request: request, peer: peer, mayChange: mayChange, budget: budget)
                if case .terminated = connections.yield(connection) {
                    ControlConnection.refuse(client, .failure("tetherd is stopping", code: .unavailable))
                }
            }
        }
    }

    /// Runs `body` on a new thread holding the slot taken for `client`, and frees the slot after.
    private func serve(_ client: Int32, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [budget] in
            body()
            budget.release()
        }
        thread.name = "tether-control-client"
        thread.stackSize = 256 * 1024
        thread.start()
    }

    /// Makes ``acceptLoop`` return; removes the socket file.
    func shutdown() {
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
        unlink(path)
    }

    deinit { close(fd) }

    /// Reads one line (up to `maxRequestBytes`) before `deadline` and decodes it; nil when the
    /// deadline passed first.
    static func readRequest(_ fd: Int32, deadline: ContinuousClock.Instant) -> Result<ControlRequest, ControlRequestError>? {
        switch ControlSocketIO.readLine(fd, limit: maxRequestBytes, deadline: deadline) {
        case .line(let data), .ended(let data): decode(data)
        case .tooLong: .failure(.init(message: "request longer than \(maxRequestBytes) bytes"))
        case .failed: .failure(.init(message: "the request could not be read"))
        case .timedOut: nil
        }
    }

    private static func decode(_ data: [UInt8]) -> Result<ControlRequest, ControlRequestError> {
        guard !data.isEmpty else { return .failure(.init(message: "empty request")) }
        do {
            return .success(try JSONDecoder().decode(ControlRequest.self, from: Data(data)))
        } catch {
            return .failure(.init(message: "not a control request: expected one JSON object with a known \"command\""))
        }
    }
}
