import ArgumentParser
import TetherProtocol

struct TetherServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tether-server",
        abstract: "Tether sync server and its admin client.",
        discussion: "Without a subcommand, runs the server (`tether-server --config FILE`).",
        version: "tether-server \(TetherVersion.release) (sync protocol \(TetherVersion.syncProtocol))",
        subcommands: [ServeCommand.self, AdminCommand.self, RestoreBackupCommand.self, TokenCommand.self],
        defaultSubcommand: ServeCommand.self
    )
}
