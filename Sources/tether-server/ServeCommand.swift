import ArgumentParser
import Foundation
import Logging
import TetherServer
import TetherProtocol
import TetherTOML

/// `tether-server [--config FILE] [--check-config]`: validates the configuration and runs the server.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the sync server (the default when no subcommand is given).")

    @Option(name: .long, help: "Configuration file.")
    var config: String = ServerConfiguration.defaultPath

    @Flag(name: .long, help: "Validate the configuration, token files and schema file, then exit (0 valid, 2 with one line per problem).")
    var checkConfig = false

    @Flag(name: .long, help: "Accept a breaking change in the schema file at start (every store made with an older schema must reset).")
    var allowBreakingSchema = false

    func run() async throws {
        let loaded: LoadedConfiguration
        do {
            loaded = try LoadedConfiguration.load(path: config)
        } catch {
            throw CommandFailure(lines: error.problems.map(\.description), exitCode: 2)
        }
        if checkConfig {
            if let location = loaded.configuration.storage.postgres {
                do {
                    let version = try await PostgresServerStorage.check(
                        location, password: loaded.storagePassword, logger: Logger(label: "tether-server.check"))
                    print("\(config): the database \(location) answers (\(version.prefix { $0 != "," }))")
                } catch {
                    // The line number only points at the key; the file was read once already.
                    let line = KeyLineIndex(text: (try? String(contentsOfFile: config, encoding: .utf8)) ?? "").line(of: "storage.url")
                    let problem = ConfigProblem(file: config, key: "storage.url", line: line, message: "the database does not answer: \(error)")
                    throw CommandFailure(lines: [problem.description], exitCode: 2)
                }
            }
            print("\(config): configuration is valid (\(loaded.configuration.users.count) users, schema version \(loaded.schema.version))")
            return
        }
        let logger = LoggingSetup.bootstrap(level: loaded.configuration.logLevel)
        do {
            try await ServerApp.run(
                loaded, options: ServerApp.Options(configPath: config, allowBreakingSchema: allowBreakingSchema, reloading: Readiness.reloading),
                logger: logger, onReady: Readiness.ready)
            Readiness.stopping()
        } catch ServerApp.StartError.configuration(let error) {
            throw CommandFailure(lines: error.problems.map(\.description), exitCode: 2)
        } catch {
            logger.critical("tether-server failed: \(error)")
            throw CommandFailure.runtime("\(error)")
        }
    }
}
