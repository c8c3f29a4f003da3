import ArgumentParser
import Foundation
import TetherCommandLine
import TetherControl
import TetherProtocol

@main
struct Tetherctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tetherctl",
        abstract: "Operator CLI for a running tetherd (through its control socket).",
        discussion: "Exit status: 0 success, 1 runtime error or timeout, 2 usage error, 3 daemon unreachable.",
        version: "tetherctl \(TetherVersion.release)",
        subcommands: [Status.self, Resets.self, Reset.self, WaitSynced.self, Pause.self, Resume.self, LogLevel.self]
    )

    /// Accepted before the command too: `tetherctl --socket PATH status` (docs/contract.md: tetherctl).
    @OptionGroup var options: GlobalOptions

    static func main() async { await CommandLineExit.main(Self.self) }
}

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Control socket of the agent.")
    var socket: String = "/run/tether/tetherd.sock"

    @Flag(name: .long, help: "Print one JSON document.")
    var json = false

    /// Sends `request`; prints the result (JSON or `human`), or the error; exits as docs/contract.md "Programs" says.
    func perform(_ request: ControlRequest, human: (JSONValue) -> String) throws {
        let response: ControlResponse
        do {
            response = try ControlClient(socketPath: socket).send(request)
        } catch {
            FileHandle.standardError.write(Data("tetherctl: \(error)\n".utf8))
            throw ExitCode(3)
        }
        guard response.ok else {
            FileHandle.standardError.write(Data("tetherctl: \(response.error ?? "the daemon refused the request")\n".utf8))
            throw ExitCode(response.exitCode ?? 1)
        }
        let result = response.result ?? .null
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data = (try? encoder.encode(result)) ?? Data("null".utf8)
            print(String(decoding: data, as: UTF8.self))
        } else {
            let text = human(result)
            if !text.isEmpty { print(text) }
        }
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show every partition's sync state.")
    @OptionGroup var options: GlobalOptions
    func run() throws {
        try options.perform(ControlRequest(command: .status), human: StatusFormatter.table)
    }
}

struct Resets: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List client resets, oldest first.")
    @OptionGroup var options: GlobalOptions
    @Option(name: .long, help: "Only this partition's resets.")
    var partition: String?
    func run() throws {
        try options.perform(ControlRequest(command: .resets, partition: partition), human: StatusFormatter.resets)
    }
}

struct Reset: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Client reset commands.", subcommands: [Initiate.self])

    struct Initiate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Carry out a pending manual reset or delete-store action now, or force a reset of a partition stuck in an error state.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The partition.")
        var partition: String
        func run() throws {
            try options.perform(ControlRequest(command: .resetInitiate, partition: partition)) { result in
                "reset \(result["id"]?.stringValue ?? "?") of \(partition): \(result["outcome"]?.stringValue ?? "started")"
            }
        }
    }
}

struct WaitSynced: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wait-synced",
        abstract: "Wait until every local change is uploaded and the store holds the server's latest version.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The partition.")
    var partition: String
    @Option(name: .long, help: "Give up after this many seconds (exit 1).")
    var timeout: Double = 60
    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
    }
    func run() throws {
        try options.perform(ControlRequest(command: .waitSynced, partition: partition, timeout: timeout)) { result in
            "\(partition) synced at server version \(result["server_version"]?.numberValue.map { String(Int($0)) } ?? "?")"
        }
    }
}

struct Pause: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Stop syncing one partition (until resume; kept across restarts).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The partition.")
    var partition: String
    func run() throws {
        try options.perform(ControlRequest(command: .pause, partition: partition)) { _ in "\(partition) paused" }
    }
}

struct Resume: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Sync a paused partition again.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The partition.")
    var partition: String
    func run() throws {
        try options.perform(ControlRequest(command: .resume, partition: partition)) { _ in "\(partition) resumed" }
    }
}

struct LogLevel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log-level", abstract: "Change the log level at run time (fatal error warn info detail debug trace).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The new level.")
    var level: String
    func validate() throws {
        let levels = ["fatal", "error", "warn", "info", "detail", "debug", "trace"]
        guard levels.contains(level) else {
            throw ValidationError("\(level) is not a log level; use one of \(levels.joined(separator: " "))")
        }
    }
    func run() throws {
        try options.perform(ControlRequest(command: .logLevel, level: level)) { _ in "log level is now \(level)" }
    }
}
