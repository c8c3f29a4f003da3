import Foundation
import Glibc
import Testing
import TetherControl
import TetherTestSupport

/// `tetherctl events` with real processes: the same events live and after the fact, and a
/// reader that stops reading slows neither the agent nor other readers.
@Suite(.timeLimit(.minutes(5)))
struct EventStreamEndToEndTests {
    /// A follower started before a sync sees its state events as they happen; `--no-follow`
    /// afterwards lists the same events (same numbers); `--partition` keeps to one partition.
    @Test func theStreamShowsEventsLiveAndAfterTheFact() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p", "q"])
            try await a.start()
            try await a.waitSynced("p")
            let follower = try ChildProcess.start(
                try BuiltProducts.executable("tetherctl"), ["--socket", a.socket, "events", "--json", "--partition", "p"])
            defer { follower.signal(SIGTERM) }
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('x', 'xena', 1)")
            try await a.waitSynced("p")
            _ = try await a.ctl(["pause", "p"])
            #expect(await follower.waitForOutput(#""state":"paused""#, timeout: .seconds(20)), "live: \(follower.standardOutput)")
            _ = try await a.ctl(["resume", "p"])
            try await a.waitSynced("p")
            #expect(await follower.waitForOutput(#""state":"synced""#, timeout: .seconds(20)))

            let live = jsonLines(follower.standardOutput)
            let kept = try await a.events(partition: "p")
            #expect(!live.isEmpty && live.allSatisfy { $0["partition"] == "p" || $0["partition"] == nil || $0["partition"] == "" })
            let liveSeqs = Set(live.compactMap { $0["seq"] })
            #expect(liveSeqs.isSubset(of: Set(kept.compactMap { $0["seq"] })), "the kept events include every live one")
            #expect(kept.contains { $0["event"] == "state" && $0["state"] == "paused" })

            let human = try await a.ctl(["events", "--no-follow"])
            #expect(human.status == 0 && human.standardOutput.contains(" state p state=paused"), "\(human.standardOutput)")
            let unknown = try await a.ctl(["events", "--no-follow", "--partition", "nope"])
            #expect(unknown.status == 1 && unknown.standardError.contains("no partition named nope"))
        }
    }

    /// A reader that connects and never reads: thousands of events later the agent still
    /// answers at once, syncs, and another follower gets every event; the stalled reader, when
    /// it reads at last, is told how many events it missed.
    @Test func aStalledReaderSlowsNobody() async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            let stalled = try Self.connect(a.socket, request: #"{"command":"events","follow":true}"#)
            defer { close(stalled) }
            let follower = try ChildProcess.start(try BuiltProducts.executable("tetherctl"), ["--socket", a.socket, "events", "--json"])
            defer { follower.signal(SIGTERM) }
            // The follower streams before the commands start (the sync's events come first):
            // one that subscribed late would see only the last 1,000 kept, under load.
            _ = try await eventually("the live follower is streaming", timeout: .seconds(30)) {
                jsonLines(follower.standardOutput).isEmpty ? nil : true
            }
            // Pauses and resumes through the control socket until well over a reader's queue
            // and the kept history have been emitted. A pause and a resume the partition hears
            // of before it publishes its state make no event, so under load a cycle may make
            // none: the loop counts events, not cycles. Every command answers within the
            // client's timeout while the reader stalls.
            let client = ControlClient(socketPath: a.socket, timeout: .seconds(10))
            let first = try #require(try await a.events().last.flatMap(Self.seq))
            var emitted = 0
            var cycles = 0
            while emitted < 2500 && cycles < 40_000 {
                for _ in 0..<250 {
                    _ = try client.send(ControlRequest(command: .pause, partition: "p"))
                    _ = try client.send(ControlRequest(command: .resume, partition: "p"))
                }
                cycles += 250
                emitted = (try await a.events().last.flatMap(Self.seq) ?? first) - first
            }
            #expect(emitted >= 2500, "\(cycles) pause/resume cycles made \(emitted) events")
            let status = try client.send(ControlRequest(command: .status))
            #expect(status.ok)
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('x', 'xena', 1)")
            try await a.waitSynced("p")
            // The live follower gets every event up to the last one the agent kept, with no gap.
            let kept = try await a.events()
            let last = try #require(kept.last.flatMap(Self.seq))
            try await eventually("the live follower caught up", timeout: .seconds(60)) {
                (jsonLines(follower.standardOutput).compactMap(Self.seq).max() ?? 0) >= last
            }
            let live = jsonLines(follower.standardOutput)
            let seqs = live.compactMap(Self.seq)
            #expect(!live.contains { $0["event"] == "dropped" }, "the live follower missed nothing")
            #expect(seqs == Array(seqs.first!...seqs.last!), "no gap in the live follower's events")
            #expect(seqs.count > 2000, "every event since the follower subscribed: \(seqs.count)")

            // The stalled reader reads at last: its queue, then a note of what it missed.
            let text = Self.readAvailable(stalled, until: #""event":"dropped""#, timeout: .seconds(20))
            let dropped = jsonLines(text).first { $0["event"] == "dropped" }
            #expect(dropped != nil, "no dropped note in \(text.suffix(500))")
            if case .number(let skipped)? = dropped?["skipped"] { #expect(skipped > 0) }
        }
    }

    static func seq(_ event: JSONValue) -> Int? {
        if case .number(let value)? = event["seq"], value > 0 { return Int(value) }
        return nil
    }

    /// Connects to `socket` with a small receive buffer and sends `request`; reads nothing.
    static func connect(_ socket: String, request: String) throws -> Int32 {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var size: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        guard var address = UnixSocketAddress.make(socket) else { throw TestSupportError("socket path too long") }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw TestSupportError("cannot connect to \(socket)") }
        let line = Array((request + "\n").utf8)
        _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return fd
    }

    /// Reads what `fd` has until `marker` appears or `timeout` passes.
    static func readAvailable(_ fd: Int32, until marker: String, timeout: Duration) -> String {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 1000) > 0 else { continue }
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { break }
            data.append(contentsOf: chunk[0..<n])
            if String(decoding: data.suffix(64 * 1024), as: UTF8.self).contains(marker) { break }
        }
        return String(decoding: data, as: UTF8.self)
    }
}
