import Foundation
import Synchronization

/// Hostile unauthenticated clients on loopback, for the flood suites and the fault campaign's
/// `flood` fault: many connections, each from one of several source addresses (127.0.0.x),
/// each one slow or oversized request on one route of one listener, none of which ever
/// authenticates. A connection the server closes is opened again a second later, while the
/// plan allows more connections in all (``Plan/maxOpens``, at most ``Plan/reopensPerSecond``),
/// so the pressure lasts.
///
/// The attacks (``Attack``) are those of issue 46: slow headers, slow bodies announcing a large
/// `Content-Length`, oversized heads, WebSocket upgrades that never bind, console sign-ins with
/// 60 KB bodies, and partial WebSocket frames. Connection `k` makes attack `k mod attacks`; each
/// attack goes round its routes and the targets (listeners) in turn, and connections round the
/// source addresses.
///
/// One plain thread runs a `poll(2)` loop over every socket (nothing blocks Swift concurrency's
/// threads), as ``LoopbackProxy``'s does; every socket is non-blocking. The loop ends by itself
/// at ``Plan/lasting`` if nobody stops it, and never opens more than ``Plan/maxOpens``
/// connections: every loop is bounded in count and time.
package final class LoopbackFlood: Sendable {
    package enum Attack: String, CaseIterable, Sendable {
        /// Half a request head, then one header line per drip: never complete.
        case slowHeaders = "slow-headers"
        /// A complete head announcing a 16 MiB body, then one byte of it per drip.
        case slowBody = "slow-body"
        /// 72 KiB of header lines (over the 64 KiB a connection may send before it
        /// authenticates), then one more line per drip: never complete.
        case oversizedHead = "oversized-head"
        /// A WebSocket upgrade, then a ping per drip: never a bind.
        case unboundUpgrade = "unbound-upgrade"
        /// `POST /console/sign-in` announcing 65,000 bytes and sending 60,000 of them, then one
        /// byte per drip (issue 46, finding 1).
        case signInBody = "sign-in-body"
        /// A WebSocket upgrade, a binary frame announcing 16 MiB and 8 KiB of it, then one
        /// byte per drip.
        case partialFrame = "partial-frame"

        /// The routes the attack is made on: the WebSocket attacks on `/sync`, the sign-in on the
        /// sign-in form, the others on every route.
        func paths(_ routes: [String]) -> [String] {
            switch self {
            case .unboundUpgrade, .partialFrame: ["/sync"]
            case .signInBody: ["/console/sign-in"]
            default: routes
            }
        }
    }

    /// Every route of the server's listeners (the devices' and the admin one), and some it
    /// does not serve: a flood goes to each on each listener, whichever serves it.
    package static let routes = [
        "/sync", "/healthz", "/metrics", "/enroll", "/admin/status", "/admin/grants", "/console", "/console/sign-in",
        "/console/actions/terminate-sync", "/no-such-route",
    ]

    package struct Plan: Sendable {
        /// Connections open at once.
        package var connections: Int
        /// The listeners' ports (`127.0.0.1`): the devices' listener and the admin one.
        package var ports: [UInt16]
        /// Each connection binds one of these before it connects, in turn.
        package var sourceAddresses: [String]
        package var attacks: [Attack] = Attack.allCases
        package var routes: [String] = LoopbackFlood.routes
        /// Connections opened in all, reopened ones included.
        package var maxOpens: Int
        /// Connections reopened per second at most (a server that closes every connection at
        /// once costs this many connects a second, not one per connection).
        package var reopensPerSecond: Int
        /// How often each connection sends its next slow byte or line.
        package var dripInterval: Duration = .seconds(1)
        /// The loop stops by itself after this long, if ``LoopbackFlood/stop()`` was not called.
        package var lasting: Duration

        package init(
            connections: Int, ports: [UInt16], sourceAddresses: [String], maxOpens: Int? = nil, reopensPerSecond: Int = 200,
            lasting: Duration
        ) {
            self.connections = connections
            self.ports = ports
            self.sourceAddresses = sourceAddresses
            self.maxOpens = maxOpens ?? connections * 10
            self.reopensPerSecond = reopensPerSecond
            self.lasting = lasting
        }
    }

    /// What the flood did so far.
    package struct Counts: Sendable, CustomStringConvertible {
        /// Connections attempted (reopened ones included).
        package var opened = 0
        /// Connections whose first request (the part sent at full speed) was all sent.
        package var delivered = 0
        /// Connections the server closed (or reset) after they connected.
        package var closedByServer = 0
        /// Connections that could not connect (refused, no address, no descriptor).
        package var connectFailed = 0
        /// Connections open now.
        package var open = 0
        package var bytesSent = 0

        package init() {}

        package var description: String {
            "opened \(opened), first request sent by \(delivered), closed by the server \(closedByServer), connect failures \(connectFailed), open now \(open), \(bytesSent >> 10) KiB sent"
        }
    }

    package let plan: Plan
    private let state: Mutex<State>
    private let wakeRead: Int32
    private let wakeWrite: Int32

    struct State {
        var counts = Counts()
        var stopped = false
        var finished = false
    }

    /// Starts the flood: its thread opens the connections at once (in waves) and keeps them going.
    package init(_ plan: Plan) throws {
        guard plan.connections > 0, !plan.ports.isEmpty, !plan.sourceAddresses.isEmpty, !plan.attacks.isEmpty else {
            throw TestSupportError("a flood needs connections, ports, source addresses and attacks")
        }
        for address in plan.sourceAddresses where !address.hasPrefix("127.") {
            throw TestSupportError("a flood targets loopback only: source address \(address)")
        }
        self.plan = plan
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw TestSupportError("pipe: \(String(cString: strerror(errno)))") }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        for fd in ends {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        state = Mutex(State())
        let loop = FloodLoop(plan: plan, wakeRead: wakeRead)
        Thread.detachNewThread { [self] in
            loop.run(flood: self)
            // Under the lock: ``stop()`` writes to the pipe under it too.
            state.withLock { state in
                close(wakeRead)
                close(wakeWrite)
                state.stopped = true
                state.finished = true
            }
        }
    }

    package var counts: Counts { state.withLock { $0.counts } }

    /// Whether the loop ended (stopped, or past ``Plan/lasting``); every connection is closed then.
    package var isFinished: Bool { state.withLock { $0.finished } }

    /// Closes every connection and waits (up to 10 s) for the thread to end.
    package func stop() async {
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
        for _ in 0..<1000 where !isFinished {
            try? await Task.sleep(for: .milliseconds(10))  // cancelled: the rounds pass at once and stop returns
        }
    }

    var isStopped: Bool { state.withLock { $0.stopped } }

    func update(_ change: (inout Counts) -> Void) { state.withLock { change(&$0.counts) } }
}
