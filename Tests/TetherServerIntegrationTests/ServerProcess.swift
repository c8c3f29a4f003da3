import Foundation
import TetherServer
import TetherTestSupport
#if canImport(Glibc)
import Glibc
import NIOCore
#endif

/// A real `tether-server` child process on free loopback ports (the devices' listener and the
/// admin listener, `admin_listen`) with its own temporary data dir, config, token files and
/// schema. Tests run many of these in parallel.
final class ServerProcess: @unchecked Sendable {
    static let adminToken = "admin-secret"
    static let tokens = ["pos-17": "pos17-secret", "reader": "reader-secret", "nobody": "nobody-secret"]

    /// The same `orders` schema the cluster harness serves.
    static let schemaV1 = Cluster.schema

    let directory: String
    let configPath: String
    private(set) var process: Process?
    /// The devices' listener (`listen`): `/sync`, `/healthz`, `/metrics` with `public_metrics`.
    private(set) var port: Int = 0
    /// The admin listener (`admin_listen`): `/admin`, `/console`, `/healthz`, `/metrics`.
    private(set) var adminPort: Int = 0
    private var logOffset = 0
    /// The umask the server is started with (through `/bin/sh -c 'umask …; exec …'`); nil:
    /// this process's.
    let startUmask: String?

    /// Writes the config (extra TOML appended to the root table) and starts the server.
    init(extraConfig: String = "", clientRecovery: Bool = true, schema: String = ServerProcess.schemaV1, umask: String? = nil) async throws {
        startUmask = umask
        directory = NSTemporaryDirectory() + "tether-it-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/users", withIntermediateDirectories: true)
        try Self.adminToken.write(toFile: directory + "/admin.token", atomically: true, encoding: .utf8)
        chmod(directory + "/admin.token", 0o600)  // the server refuses token files others may read
        for (user, token) in Self.tokens {
            try (token + "\n").write(toFile: directory + "/users/\(user).token", atomically: true, encoding: .utf8)
            chmod(directory + "/users/\(user).token", 0o600)
        }
        try schema.write(toFile: directory + "/schema.toml", atomically: true, encoding: .utf8)
        configPath = directory + "/server.toml"
        let config = """
            listen = "127.0.0.1:0"
            admin_listen = "127.0.0.1:0"
            data_dir = "\(directory)/data"
            schema = "\(directory)/schema.toml"
            admin_token_file = "\(directory)/admin.token"
            client_recovery = \(clientRecovery)
            log_level = "detail"
            \(extraConfig)

            [[user]]
            name = "pos-17"
            token_file = "\(directory)/users/pos-17.token"

            [[user]]
            name = "reader"
            token_file = "\(directory)/users/reader.token"

            [[user]]
            name = "nobody"
            token_file = "\(directory)/users/nobody.token"

            [[grant]]
            user = "pos-17"
            partitions = ["store-17", "store-1?", "catalog-*"]
            access = "readwrite"

            [[grant]]
            user = "reader"
            partitions = ["catalog-*"]
            access = "read"
            """
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        try await start()
    }

    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["TETHER_SERVER_BIN"] { return path }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return (exe as NSString).deletingLastPathComponent + "/tether-server"
    }

    var logPath: String { directory + "/server.log" }
    var syncURL: String { "ws://127.0.0.1:\(port)/sync" }
    /// The devices' listener over HTTP (`/healthz`, `/metrics`).
    var httpURL: String { "http://127.0.0.1:\(port)" }
    /// The admin listener: the admin API and the console.
    var adminURL: String { "http://127.0.0.1:\(adminPort)" }
    var admin: AdminClient { AdminClient(baseURL: adminURL, token: Self.adminToken, connectTimeout: .seconds(30)) }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Starts the server and waits (with a deadline) for its "listening on" lines (both listeners).
    func start(arguments: [String] = []) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: startUmask == nil ? Self.binary : "/bin/sh")
        process.arguments = (startUmask.map { ["-c", "umask \($0) && exec \"$0\" \"$@\"", Self.binary] } ?? []) + ["--config", configPath] + arguments
        if !FileManager.default.fileExists(atPath: logPath) { _ = FileManager.default.createFile(atPath: logPath, contents: nil) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        handle.seekToEndOfFile()
        logOffset = Int(handle.offsetInFile)
        process.standardError = handle
        process.standardOutput = handle
        try process.run()
        self.process = process
        (port, adminPort) = try await eventually("server to listen", timeout: .seconds(30)) {
            guard process.isRunning else { throw ServerFailure("server exited with \(process.terminationStatus):\n\(self.log)") }
            let text = String(self.log.dropFirst(self.logOffset))
            guard let sync = Self.port(after: "tether-server listening on 127.0.0.1:", in: text),
                let admin = Self.port(after: "admin listening on 127.0.0.1:", in: text)
            else { return nil }
            return (sync, admin)
        }
    }

    /// The port in the first line of `text` that has `prefix`.
    static func port(after prefix: String, in text: String) -> Int? {
        guard let range = text.range(of: prefix) else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }

    /// `kill -9`: no chance to flush anything that was not committed.
    func kill9() async throws {
        guard let process else { return }
        kill(process.processIdentifier, SIGKILL)
        try await waitForExit(process)
    }

    /// SIGTERM and wait: the graceful path.
    func stop() async throws {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        try await waitForExit(process)
    }

    func signal(_ number: Int32) {
        if let process { kill(process.processIdentifier, number) }
    }

    private func waitForExit(_ process: Process) async throws {
        _ = try await eventually("server to exit", timeout: .seconds(20)) { process.isRunning ? nil : true }
        self.process = nil
    }

    /// Stops the server and removes its directory.
    func shutdown() async {
        try? await kill9()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `tether-server admin --url … --token-file … ARGS` against the admin listener (or
    /// `url`) and returns (exit code, stdout, stderr).
    func adminCLI(_ arguments: [String], token: String? = nil, url: String? = nil) async throws -> CLIResult {
        let tokenFile = directory + "/cli-\(UUID().uuidString).token"
        try (token ?? Self.adminToken).write(toFile: tokenFile, atomically: true, encoding: .utf8)
        return try await runCLI(["admin", "--url", url ?? adminURL, "--token-file", tokenFile] + arguments)
    }

    func runCLI(_ arguments: [String]) async throws -> CLIResult {
        try await CLIResult.run(Self.binary, arguments, directory: directory)
    }
}

struct CLIResult: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String

    static func run(_ binary: String, _ arguments: [String], directory: String) async throws -> CLIResult {
        let out = directory + "/cli-\(UUID().uuidString).out"
        let err = out + ".err"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
        try process.run()
        _ = try await eventually("\(arguments.prefix(3).joined(separator: " ")) to finish", timeout: .seconds(60)) { process.isRunning ? nil : true }
        return CLIResult(
            status: process.terminationStatus,
            stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }
}

struct ServerFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Starts a server for `body` and always shuts it down (killing it and removing its directory).
func withServer<T>(
    extraConfig: String = "", clientRecovery: Bool = true, _ body: (ServerProcess) async throws -> T
) async throws -> T {
    let server = try await ServerProcess(extraConfig: extraConfig, clientRecovery: clientRecovery)
    do {
        let result = try await body(server)
        await server.shutdown()
        return result
    } catch {
        let log = server.log
        await server.shutdown()
        throw ServerFailure("\(error)\n--- server log ---\n\(log.suffix(4000))")
    }
}
