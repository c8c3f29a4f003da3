import ArgumentParser
import Foundation
import TetherCommandLine
import TetherControl
import TetherProtocol
import TetherTOML

@main
struct Tetherctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tetherctl",
        abstract: "Operator CLI for a running tetherd (through its control socket).",
        discussion: "Exit status: 0 success, 1 runtime error or timeout (enroll: the server refused), 2 usage error, 3 daemon unreachable, 4 permission denied, 5 enroll: the server cannot enroll now (try again later).",
        version: "tetherctl \(TetherVersion.release)",
        subcommands: [Status.self, Resets.self, Reset.self, WaitSynced.self, Pause.self, Resume.self, Retry.self, Subscriptions.self, LogLevel.self, Metrics.self, Events.self, Diagnostics.self, Enroll.self]
    )

    /// Accepted before the command too: `tetherctl --socket PATH status` (docs/contract.md: tetherctl).
    @OptionGroup var options: GlobalOptions

    static func main() async { await CommandLineExit.main(Self.self) }
}

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    static let defaultSocket = "/run/tether/tetherd.sock"
    static let defaultTimeout = 30.0

    @Option(
        name: .long,
        help: "Control socket of the agent (default: control_socket of --config, else $TETHER_SOCKET, else /run/tether/tetherd.sock).")
    var socket: String?

    @Option(name: .long, help: "tetherd's configuration file: its control_socket is the socket to use.")
    var config: String?

    @Option(name: .long, help: "Give up after this many seconds (exit 1). Default 30; wait-synced and subscriptions --wait wait this long (default 60).")
    var timeout: Double?

    @Flag(name: .long, help: "Print one JSON document.")
    var json = false

    func validate() throws {
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout must be positive") }
    }

    /// --socket, else the control_socket of --config, else TETHER_SOCKET, else the default.
    func socketPath() throws -> String {
        if let socket { return socket }
        if let config { return try Self.controlSocket(of: config) }
        if let socket = ProcessInfo.processInfo.environment["TETHER_SOCKET"], !socket.isEmpty { return socket }
        return Self.defaultSocket
    }

    /// The `control_socket` of a tetherd.toml (the default when the file does not set it).
    static func controlSocket(of path: String) throws -> String {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            FileHandle.standardError.write(Data("tetherctl: --config \(path): cannot read the file\n".utf8))
            throw ExitCode(2)
        }
        do {
            let parser = try ConfigParser(text: text, file: path)
            return parser.root.absolutePath("control_socket") ?? defaultSocket
        } catch {
            for problem in error.problems { FileHandle.standardError.write(Data("tetherctl: \(problem)\n".utf8)) }
            throw ExitCode(2)
        }
    }

    /// Sends `request` and returns its result; prints the error and exits as docs/contract.md "Programs" says
    /// (3 daemon unreachable, 1 no answer within the timeout).
    func send(_ request: ControlRequest, timeout clientTimeout: Double? = nil) throws -> JSONValue {
        try exchange(timeout: clientTimeout) { client throws(ControlClientError) in try client.send(request) }
    }

    /// Sends a streaming `request`: each line after the answer goes to `line`; returns the
    /// answer's result once the daemon ends the stream. Errors as ``send(_:timeout:)``.
    func stream(_ request: ControlRequest, line: (String) -> Bool) throws -> JSONValue {
        try exchange(timeout: nil) { client throws(ControlClientError) in try client.stream(request, line: line) }
    }

    /// One exchange with the daemon through `body`; prints the error and exits as docs/contract.md
    /// "Programs" says (3 daemon unreachable, 1 no answer within the timeout, the daemon's code).
    private func exchange(
        timeout clientTimeout: Double?, _ body: (ControlClient) throws(ControlClientError) -> ControlResponse
    ) throws -> JSONValue {
        let response: ControlResponse
        let limit = clientTimeout ?? timeout ?? Self.defaultTimeout
        let path = try socketPath()
        do {
            response = try body(ControlClient(socketPath: path, timeout: .milliseconds(Int64(limit * 1000))))
        } catch {
            FileHandle.standardError.write(Data("tetherctl: \(TerminalText.safe("\(error)"))\n".utf8))
            throw ExitCode(error.isTimeout ? 1 : 3)
        }
        guard response.ok else {
            // With --json the refusal is also a JSON document on stdout, with its code.
            if json { print(Self.refusalDocument(response)) }
            // The daemon's words may hold the server's: shown safe (TerminalText).
            FileHandle.standardError.write(Data("tetherctl: \(TerminalText.safe(response.error ?? "the daemon refused the request"))\n".utf8))
            throw ExitCode(response.exitCode ?? 1)
        }
        return response.result ?? .null
    }

    /// Sends `request`; prints the result (as it came with `--json`, else `human` of the
    /// report it holds), or the error; exits as docs/contract.md "Programs" says.
    func perform<Report: Decodable>(
        _ request: ControlRequest, as type: Report.Type, timeout clientTimeout: Double? = nil, human: (Report) -> String
    ) throws {
        let text = try render(try send(request, timeout: clientTimeout), as: type, human: human)
        if !text.isEmpty { print(text) }
    }

    func render<Report: Decodable>(_ result: JSONValue, as type: Report.Type, human: (Report) -> String) throws -> String {
        json ? Self.pretty(result) : human(try Self.report(result, as: type))
    }

    /// The report a result holds; an answer of another shape (a daemon of another release)
    /// is an error (exit status 1), never read as zeros.
    static func report<Report: Decodable>(_ result: JSONValue, as type: Report.Type) throws -> Report {
        do {
            return try result.decode(as: type)
        } catch {
            FileHandle.standardError.write(Data("tetherctl: the daemon's answer is not what this tetherctl reads (\(error)); --json prints it as it is\n".utf8))
            throw ExitCode(1)
        }
    }

    /// `{"ok": false, "error": …, "code": …, "exit_code": …}`, keys sorted.
    static func refusalDocument(_ response: ControlResponse) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Unencodable (a non-finite number): its minimal form.
        guard let data = try? encoder.encode(response) else { return #"{"ok": false}"# }
        return String(decoding: data, as: UTF8.self)
    }

    static func pretty(_ result: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(result) else { return "null" }  // a JSONValue always encodes
        return String(decoding: data, as: UTF8.self)
    }
}

struct Resets: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List client resets, oldest first.")
    @OptionGroup var options: GlobalOptions
    @Option(name: .long, help: "Only this partition's resets.", completion: .custom(PartitionCompletion.names))
    var partition: String?
    func run() throws {
        try options.perform(ControlRequest(command: .resets, partition: partition), as: ResetsReport.self, human: StatusFormatter.resets)
    }
}

struct Reset: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Client reset commands.", subcommands: [Initiate.self])

    struct Initiate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Carry out a pending manual reset or delete-store action now, or force a reset of a partition stuck in an error state.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The partition.", completion: .custom(PartitionCompletion.names))
        var partition: String
        func run() throws {
            try options.perform(ControlRequest(command: .resetInitiate, partition: partition), as: ResetInitiatedReport.self) { result in
                "reset \(TerminalText.safe(result.id)) of \(partition): \(TerminalText.safe(result.outcome))"
            }
        }
    }
}

struct Pause: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Stop syncing one partition (until resume; kept across restarts).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The partition.", completion: .custom(PartitionCompletion.names))
    var partition: String
    func run() throws {
        try options.perform(ControlRequest(command: .pause, partition: partition), as: PartitionStateReport.self) { _ in "\(partition) paused" }
    }
}

struct Resume: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Sync a paused partition again.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The partition.", completion: .custom(PartitionCompletion.names))
    var partition: String
    func run() throws {
        try options.perform(ControlRequest(command: .resume, partition: partition), as: PartitionStateReport.self) { _ in "\(partition) resumed" }
    }
}

struct LogLevel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log-level", abstract: "Change the log level at run time (fatal error warn info detail debug trace).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The new level.", completion: .list(LogLevel.levels))
    var level: String
    static let levels = ["fatal", "error", "warn", "info", "detail", "debug", "trace"]
    func validate() throws {
        guard Self.levels.contains(level) else {
            throw ValidationError("\(level) is not a log level; use one of \(Self.levels.joined(separator: " "))")
        }
    }
    func run() throws {
        try options.perform(ControlRequest(command: .logLevel, level: level), as: LogLevelReport.self) { result in "log level is now \(result.logLevel)" }
    }
}
