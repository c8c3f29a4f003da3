import Foundation
import Synchronization
import Logging
import ServiceLifecycle
import Testing
import TetherAgent
import TetherControl
import TetherTestSupport

/// Answers like a tiny agent: `status` lists one partition, `wait-synced` waits until cancelled.
private final class FakeHandler: ControlHandler {
    /// Counts `wait-synced` requests that arrived, so a test knows one is waiting.
    let waiting = Mutex(0)

    func handle(_ request: ControlRequest) async -> ControlResponse {
        switch request.command {
        case .status:
            return .success(["partitions": [["name": "store-17", "state": "synced", "server_version": 7, "unsynced_changes": 0,
                                              "last_error": nil, "pending_reset": nil]]])
        case .waitSynced:
            waiting.withLock { $0 += 1 }
            try? await Task.sleep(for: .seconds(3600))
            return .failure("the daemon is stopping")
        case .pause where request.partition == "store-17":
            return .success(["partition": "store-17", "state": "paused"])
        case .pause:
            return .failure("no partition named \(request.partition ?? "")", exitCode: 1)
        case .setSubscriptions:
            // Echoes what it was asked for: the subscriptions as `wanted`, `clear` as not `runtime`.
            let wanted = request.subscriptions?.map(\.description)
            let report = SubscriptionsReport(
                partition: request.partition ?? "", hasStore: true, held: nil, heldDigest: "whole", wanted: wanted, wantedDigest: "d",
                changePending: wanted != nil, runtime: request.clear != true, configured: nil, configuredDigest: "whole")
            return .success((try? JSONValue(encoding: report)) ?? .null)
        default:
            return .failure("unsupported in this test")
        }
    }
}

private func tetherctl(_ arguments: [String], asUser: Bool = false) async throws -> ChildProcess.Result {
    let binary = try BuiltProducts.executable("tetherctl")
    if asUser {
        return try await ChildProcess.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments)
    }
    return try await ChildProcess.run(binary, arguments)
}

/// Runs a control server with ``FakeHandler`` on a temp socket for the duration of `body`.
private func withControlServer(
    operatorGroup: ControlSettings.OperatorGroup = .name(ControlSettings.defaultOperatorGroup),
    _ body: @Sendable (String) async throws -> Void
) async throws {
    try await withRunningControlServer(handler: FakeHandler(), prefix: "tether-ctl", operatorGroup: operatorGroup, body)
}

@Test func statusThroughTheRealTetherctl() async throws {
    try await withControlServer { socket in
        let mode = try FileManager.default.attributesOfItem(atPath: socket)[.posixPermissions] as? Int
        #expect(mode == 0o660)
        let json = try await tetherctl(["--socket", socket, "status", "--json"])
        #expect(json.status == 0, "\(json)")
        let document = try JSONDecoder().decode(JSONValue.self, from: Data(json.standardOutput.utf8))
        #expect(document["partitions"]?.arrayValue?.first?["server_version"] == 7)
        #expect(document["partitions"]?.arrayValue?.first?["pending_reset"] == JSONValue.null)
        let table = try await tetherctl(["status", "--socket", socket])
        #expect(table.status == 0)
        #expect(table.standardOutput.hasPrefix("PARTITION"))
        #expect(table.standardOutput.contains("store-17"))
    }
}

/// `tetherctl subscriptions P set`: each `--where` filters the `--table` before it, in order;
/// `clear` sends `clear`; a `--where` without its `--table` is a usage error, nothing sent.
@Test func subscriptionsSetSendsEachTableWithItsFilter() async throws {
    try await withControlServer { socket in
        let set = try await tetherctl([
            "--socket", socket, "subscriptions", "store-17", "set", "--table", "items", "--where", "shop = 1 AND price > -1",
            "--table=settings", "--table", "promotions", "--where=ends_at >= now()", "--json",
        ])
        #expect(set.status == 0, "\(set)")
        let report = try JSONDecoder().decode(SubscriptionsReport.self, from: Data(set.standardOutput.utf8))
        #expect(report.wanted == ["items WHERE shop = 1 AND price > -1", "settings", "promotions WHERE ends_at >= now()"])
        #expect(report.runtime == true)
        let human = try await tetherctl(["--socket", socket, "subscriptions", "store-17", "set", "--table", "items"])
        #expect(human.standardOutput.hasPrefix("subscriptions of store-17 set at run time\n"), "\(human)")
        #expect(human.standardOutput.contains("wanted, set at run time (digest d):\n  items\n"), "\(human)")
        let clear = try await tetherctl(["--socket", socket, "subscriptions", "store-17", "clear", "--json"])
        #expect(clear.status == 0, "\(clear)")
        #expect(try JSONDecoder().decode(SubscriptionsReport.self, from: Data(clear.standardOutput.utf8)).runtime == false)
        for bad in [["set"], ["set", "--where", "x = 1", "--table", "items"], ["set", "--table", "a", "--where", "x", "--where", "y"],
                    ["clear", "--table", "items"], ["set", "--table"], ["--wait"]] {
            let refused = try await tetherctl(["--socket", socket, "subscriptions", "store-17"] + bad)
            #expect(refused.status == 2, "\(bad): \(refused)")
        }
    }
}

@Test func daemonErrorsExitOneAndUnreachableExitsThree() async throws {
    try await withControlServer { socket in
        let refused = try await tetherctl(["--socket", socket, "pause", "nope"])
        #expect(refused.status == 1)
        #expect(refused.standardError == "tetherctl: no partition named nope\n")
    }
    let missing = try await tetherctl(["--socket", "/nonexistent/tetherd.sock", "status"])
    #expect(missing.status == 3)
    #expect(missing.standardError.contains("cannot reach tetherd at /nonexistent/tetherd.sock"))
}

/// Sends raw bytes to the socket, closes the write side, and returns what comes back.
private func rawExchange(_ socketPath: String, _ bytes: [UInt8]) -> String {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: Array(socketPath.utf8) + [0])
    }
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard connected == 0 else { return "connect failed" }
    // The control server answers at once; a loaded machine (the parallel unit phase on two
    // cores) has delayed it past 10 s, so the read waits as long as every other test deadline.
    var timeout = timeval(tv_sec: Int(TestDeadline.standard.components.seconds), tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    shutdown(fd, Int32(SHUT_WR))
    var answer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = read(fd, &chunk, chunk.count)
        if n <= 0 { break }
        answer += chunk[0..<n]
    }
    return String(decoding: answer, as: UTF8.self)
}

@Test func garbageRequestsGetAClearErrorAndTheServerStaysUp() async throws {
    try await withControlServer { socket in
        let inputs: [[UInt8]] = [
            Array("hello\n".utf8), Array("{\"command\":\"explode\"}\n".utf8), [UInt8](repeating: 0x78, count: 200_000),
            [0, 1, 2, 0xff, 0x0a], [],
        ]
        for garbage in inputs {
            let reply = await BlockingCall.run { rawExchange(socket, garbage) }
            #expect(reply.contains("\"ok\":false"), "\(reply)")
        }
        let after = try await tetherctl(["--socket", socket, "status"])
        #expect(after.status == 0)
    }
}

@Test(.enabled(if: geteuid() == 0, "needs root to run a client as another user"))
func otherUsersAreRefused() async throws {
    try await withControlServer { socket in
        // The file mode (0660, root's group) stops them first...
        let byMode = try await tetherctl(["--socket", socket, "status"], asUser: true)
        #expect(byMode.status == 3)
        #expect(byMode.standardError.contains("permission denied"))
        // ...and SO_PEERCRED stops them even when the file is opened up.
        chmod(socket, 0o666)
        let byCredentials = try await tetherctl(["--socket", socket, "status"], asUser: true)
        #expect(byCredentials.status == 4, "permission denied has its own exit status")
        #expect(byCredentials.standardError.contains("permission denied: uid 65534"))
    }
}

/// `tetherctl` as `uid` with primary group `uid` and the supplementary `groups` (numeric ids:
/// nothing needs to exist in /etc/passwd or /etc/group).
private func tetherctl(_ arguments: [String], uid: Int, groups: [Int]) async throws -> ChildProcess.Result {
    let binary = try BuiltProducts.executable("tetherctl")
    let credentials = ["--reuid=\(uid)", "--regid=\(uid)", "--groups=\(groups.map(String.init).joined(separator: ","))"]
    return try await ChildProcess.run("/usr/bin/setpriv", credentials + [binary] + arguments)
}

/// Issue 32: the store group reads, the operator group (here a numeric gid) changes too.
@Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root and setpriv"))
func readersReadAndOnlyOperatorsChange() async throws {
    let operatorGID = 47_000 + Int.random(in: 0..<1000)
    try await withControlServer(operatorGroup: .id(UInt32(operatorGID))) { socket in
        // The socket's group is the daemon's (root's, 0 here): the store group.
        let reader = (uid: 46_001, groups: [0])
        let status = try await tetherctl(["--socket", socket, "status", "--json"], uid: reader.uid, groups: reader.groups)
        #expect(status.status == 0, "\(status)")
        let paused = try await tetherctl(["--socket", socket, "pause", "store-17"], uid: reader.uid, groups: reader.groups)
        #expect(paused.status == 4, "\(paused)")
        #expect(paused.standardError.contains("permission denied: pause changes the agent; uid 46001 may only read"), "\(paused)")
        #expect(paused.standardError.contains("gid \(operatorGID)"))
        for command in [
            ["resume", "store-17"], ["reset", "initiate", "store-17"], ["log-level", "debug"],
            ["subscriptions", "store-17", "set", "--table", "items"], ["subscriptions", "store-17", "clear"],
        ] {
            let refused = try await tetherctl(["--socket", socket] + command, uid: reader.uid, groups: reader.groups)
            #expect(refused.status == 4, "\(command): \(refused)")
        }

        let operatorMember = try await tetherctl(["--socket", socket, "pause", "store-17"], uid: 46_002, groups: [0, operatorGID])
        #expect(operatorMember.status == 0, "\(operatorMember)")
        #expect(operatorMember.standardOutput.contains("store-17 paused"))
        let asRoot = try await tetherctl(["--socket", socket, "pause", "store-17"])
        #expect(asRoot.status == 0, "\(asRoot)")
    }
}

/// An operator group that does not exist: only root and the daemon's user change.
@Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root and setpriv"))
func aMissingOperatorGroupLeavesChangesToRoot() async throws {
    try await withControlServer(operatorGroup: .name("tether-no-such-group-\(UInt32.random(in: 0...UInt32.max))")) { socket in
        let reader = try await tetherctl(["--socket", socket, "pause", "store-17"], uid: 46_003, groups: [0])
        #expect(reader.status == 4, "\(reader)")
        #expect(try await tetherctl(["--socket", socket, "pause", "store-17"]).status == 0)
    }
}

@Test func theChangingCommandsAreExactlyThese() {
    let changing = Set(ControlRequest.Command.allCases.filter(\.changesState))
    #expect(changing == [.pause, .resume, .resetInitiate, .logLevel, .retryNow, .setSubscriptions])
}

@Test func shutdownAnswersWaitingRequests() async throws {
    let dir = try TemporaryDirectory(prefix: "tether-ctl")
    defer { dir.remove() }
    let socket = dir.appending("s.sock")
    let handler = FakeHandler()
    let server = ControlServer(path: socket, handler: handler, logger: Logger(label: "test"))
    let group = ServiceGroup(configuration: .init(services: [server], logger: Logger(label: "test")))
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        try await eventually("control socket exists") { FileManager.default.fileExists(atPath: socket) }
        let waiting = try ChildProcess.start(try BuiltProducts.executable("tetherctl"), ["--socket", socket, "wait-synced", "p", "--timeout", "3600"])
        try await eventually("wait-synced request arrived") { handler.waiting.withLock { $0 } == 1 }
        #expect(!waiting.hasExited)
        await group.triggerGracefulShutdown()
        let result = await waiting.wait(timeout: TestDeadline.standard)
        #expect(result.status == 1)
        #expect(result.standardError.contains("stopping"))
        try await tasks.waitForAll()
    }
}
