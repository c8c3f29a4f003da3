import Foundation
import Synchronization
import Testing
import TetherClient
import TetherTestSupport

/// ``TetherClient``'s exchanges wait for the agent on threads of their own: on Linux Dispatch's
/// global queue is the pool every Swift task runs on (one thread per core), so a client that
/// blocked there while the agent took its time (a reset initiated, a busy agent) stalled the
/// whole application.
@Suite(.timeLimit(.minutes(1))) struct TetherClientTests {
    @Test func callersWaitingForTheAgentHoldNoThreadOfTheTaskPool() async throws {
        let dir = try TemporaryDirectory(prefix: "tether-client")
        defer { dir.remove() }
        // More than Dispatch's pool grows to (it adds threads, up to 255, when its own block for
        // long): the old client held every thread of it and the application stopped.
        let callers = 300
        let agent = try HeldAgent(path: dir.appending("tetherd.sock"), clients: callers)
        let client = TetherClient(socketPath: agent.path, timeout: .seconds(20))
        let finished = Finished()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<callers {
                group.addTask {
                    _ = try? await client.status()
                    finished.add()
                }
            }
            // Polling needs a thread of the pool: with every caller blocking one, it would only
            // come back once their 20 s timeouts had ended them.
            try await eventually("every caller waiting for the agent", timeout: .seconds(60)) { agent.waiting == callers }
            #expect(finished.count == 0, "callers ended before the agent answered: they timed out while the pool was held")
            agent.answer()
            try await group.waitForAll()
        }
        #expect(finished.count == callers)
    }
}

private final class Finished: Sendable {
    private let value = Mutex(0)
    var count: Int { value.withLock { $0 } }
    func add() { value.withLock { $0 += 1 } }
}

/// A control socket that reads each client's request line and holds its answer until
/// ``answer()``; blocking calls on threads of its own.
private final class HeldAgent: Sendable {
    let path: String
    private let listener: Int32
    private let state = Mutex((waiting: 0, answered: false))

    init(path: String, clients: Int) throws {
        self.path = path
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let bound = UnixAddress.withSockaddr(path: path) { bind(listener, $0, $1) }
        guard bound == 0, listen(listener, 512) == 0 else { throw TestSupportError("cannot listen on \(path): errno \(errno)") }
        let thread = Thread { [self] in
            for _ in 0..<clients {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                Thread { [self] in serve(client) }.start()
            }
        }
        thread.start()
    }

    deinit { close(listener) }

    var waiting: Int { state.withLock { $0.waiting } }

    func answer() { state.withLock { $0.answered = true } }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var byte: UInt8 = 0
        while read(client, &byte, 1) == 1 && byte != 0x0A {}
        state.withLock { $0.waiting += 1 }
        while !state.withLock({ $0.answered }) { usleep(5000) }
        let line = Array(#"{"ok":false,"error":{"code":"unavailable","message":"held by the test"}}"#.utf8) + [0x0A]
        _ = line.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
    }
}
