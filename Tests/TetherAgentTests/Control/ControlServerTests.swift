import Foundation
import Logging
import ServiceLifecycle
import Testing
import TetherAgent
import TetherControl

/// Answers like a tiny agent: `status` lists one partition, `wait-synced` waits until cancelled.
private struct FakeHandler: ControlHandler {
    func handle(_ request: ControlRequest) async -> ControlResponse {
        switch request.command {
        case .status:
            return .success(["partitions": [["name": "store-17", "state": "synced", "server_version": 7, "unsynced_changes": 0,
                                              "last_error": nil, "pending_reset": nil]]])
        case .waitSynced:
            try? await Task.sleep(for: .seconds(3600))
            return .failure("the daemon is stopping")
        case .pause:
            return .failure("no partition named \(request.partition ?? "")", exitCode: 1)
        default:
            return .failure("unsupported in this test")
        }
    }
}

/// The built `tetherctl` next to the test bundle.
private let tetherctl: String = {
    var url = Bundle.main.bundleURL
    while !FileManager.default.fileExists(atPath: url.appendingPathComponent("tetherctl").path), url.path != "/" {
        url.deleteLastPathComponent()
    }
    return url.appendingPathComponent("tetherctl").path
}()

private struct Output { var status: Int32; var stdout: String; var stderr: String }

private func run(_ executable: String, _ arguments: [String]) throws -> Output {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Output(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
}

/// Runs a control server on a temp socket for the duration of `body`.
private func withControlServer(_ body: @Sendable (String) async throws -> Void) async throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tether-ctl-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    chmod(dir, 0o755)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let socket = dir + "/tetherd.sock"
    let server = ControlServer(path: socket, handler: FakeHandler(), logger: Logger(label: "test"))
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await server.run() }
        let deadline = ContinuousClock.now + .seconds(10)
        while !FileManager.default.fileExists(atPath: socket) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await body(socket)
        group.cancelAll()
        try await group.waitForAll()
    }
    #expect(!FileManager.default.fileExists(atPath: socket), "the socket is removed at shutdown")
}

@Test func statusThroughTheRealTetherctl() async throws {
    try await withControlServer { socket in
        let mode = try FileManager.default.attributesOfItem(atPath: socket)[.posixPermissions] as? Int
        #expect(mode == 0o660)
        let json = try run(tetherctl, ["--socket", socket, "status", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let document = try JSONDecoder().decode(JSONValue.self, from: Data(json.stdout.utf8))
        #expect(document["partitions"]?.arrayValue?.first?["server_version"] == 7)
        #expect(document["partitions"]?.arrayValue?.first?["pending_reset"] == JSONValue.null)
        let table = try run(tetherctl, ["status", "--socket", socket])
        #expect(table.status == 0)
        #expect(table.stdout.hasPrefix("PARTITION"))
        #expect(table.stdout.contains("store-17"))
    }
}

@Test func daemonErrorsExitOneAndUnreachableExitsThree() async throws {
    try await withControlServer { socket in
        let refused = try run(tetherctl, ["--socket", socket, "pause", "nope"])
        #expect(refused.status == 1)
        #expect(refused.stderr == "tetherctl: no partition named nope\n")
    }
    let missing = try run(tetherctl, ["--socket", "/nonexistent/tetherd.sock", "status"])
    #expect(missing.status == 3)
    #expect(missing.stderr.contains("cannot reach tetherd at /nonexistent/tetherd.sock"))
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
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
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
            let reply = rawExchange(socket, garbage)
            #expect(reply.contains("\"ok\":false"), "\(reply)")
        }
        let after = try run(tetherctl, ["--socket", socket, "status"])
        #expect(after.status == 0)
    }
}

@Test(.enabled(if: geteuid() == 0, "needs root to run a client as another user"))
func otherUsersAreRefused() async throws {
    try await withControlServer { socket in
        let asNobody = ["--reuid=65534", "--regid=65534", "--clear-groups", tetherctl, "--socket", socket, "status"]
        // The file mode (0660, root's group) stops them first...
        let byMode = try run("/usr/bin/setpriv", asNobody)
        #expect(byMode.status == 3)
        #expect(byMode.stderr.contains("permission denied"))
        // ...and SO_PEERCRED stops them even when the file is opened up.
        chmod(socket, 0o666)
        let byCredentials = try run("/usr/bin/setpriv", asNobody)
        #expect(byCredentials.status == 1)
        #expect(byCredentials.stderr.contains("permission denied: uid 65534"))
    }
}

@Test func shutdownAnswersWaitingRequests() async throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tether-ctl-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let socket = dir + "/s.sock"
    let server = ControlServer(path: socket, handler: FakeHandler(), logger: Logger(label: "test"))
    let group = ServiceGroup(configuration: .init(services: [server], logger: Logger(label: "test")))
    try await withThrowingTaskGroup(of: Output?.self) { tasks in
        tasks.addTask { try await group.run(); return nil }
        while !FileManager.default.fileExists(atPath: socket) { try await Task.sleep(for: .milliseconds(10)) }
        tasks.addTask { try run(tetherctl, ["--socket", socket, "wait-synced", "p", "--timeout", "3600"]) }
        try await Task.sleep(for: .milliseconds(200))  // let the request arrive; the assertion below does not depend on it
        await group.triggerGracefulShutdown()
        var waited: Output?
        for try await output in tasks { if let output { waited = output } }
        #expect(waited?.status == 1)
        #expect(waited?.stderr.contains("stopping") == true)
    }
}
