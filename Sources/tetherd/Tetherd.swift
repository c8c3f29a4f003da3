import ArgumentParser
import Foundation
import Logging
import TetherAgent
import TetherCommandLine
import TetherProtocol
import TetherSystemd
import TetherTOML

@main
struct Tetherd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tetherd",
        abstract: "Tether sync agent: keeps SQLite stores in sync with tether-server.",
        discussion: """
            Runs under systemd (Type=notify). Reads its configuration from --config; SIGHUP \
            reloads it, SIGTERM stops the agent. Every key is described in docs/configuration.md; \
            logging (levels, journald fields, destinations) in docs/logging.md.
            """,
        version: "tetherd \(TetherVersion.release) (sync protocol \(TetherVersion.syncProtocol))"
    )

    @Option(name: .long, help: "Configuration file.")
    var config: String = "/etc/tether/tetherd.toml"

    @Flag(name: .long, help: "Validate the configuration and exit (0 valid, 2 invalid).")
    var checkConfig = false

    @Option(
        name: .long,
        help: """
            Where log records go: auto (journald when run by systemd, else stderr), journal or stderr.
            """)
    var logDestination: LogDestination = .auto

    static func main() async { await CommandLineExit.main(Self.self) }

    func run() async throws {
        if checkConfig {
            do {
                let loaded = try AgentConfiguration.load(path: config)
                print("\(config): ok (\(loaded.partitions.count) partition\(loaded.partitions.count == 1 ? "" : "s"))")
                return
            } catch {
                for problem in error.problems { FileHandle.standardError.write(Data("\(problem)\n".utf8)) }
                throw ExitCode(2)
            }
        }
        let decision = TetherLogging.bootstrap(identifier: "tetherd", level: .info, destination: logDestination)
        let logger = Logger(label: "tether.agent")
        logger.info("log destination: \(decision)")
        logger.notice(
            "tetherd \(TetherVersion.release) starting",
            metadata: ["tether.version": "\(TetherVersion.release)", "tether.config": "\(config)"])
        FileHandle.standardError.write(Data("tetherd: the agent is not part of this build yet\n".utf8))
        throw ExitCode(1)
    }
}

extension LogDestination: ExpressibleByArgument {}
