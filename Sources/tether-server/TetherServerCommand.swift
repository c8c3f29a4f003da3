import ArgumentParser
import Foundation
import TetherProtocol

@main
struct TetherServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tether-server",
        abstract: "Tether sync server and its admin client.",
        version: "tether-server \(TetherVersion.release) (sync protocol \(TetherVersion.syncProtocol))"
    )

    @Option(name: .long, help: "Configuration file.")
    var config: String = "/etc/tether/tether-server.toml"

    func run() async throws {
        FileHandle.standardError.write(Data("tether-server: the server is not part of this build yet\n".utf8))
        throw ExitCode(1)
    }
}
