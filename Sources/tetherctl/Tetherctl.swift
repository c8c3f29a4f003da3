import ArgumentParser
import Foundation
import TetherProtocol

@main
struct Tetherctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tetherctl",
        abstract: "Operator CLI for a running tetherd (through its control socket).",
        discussion: "Exit status: 0 success, 1 runtime error, 2 usage error, 3 daemon unreachable.",
        version: "tetherctl \(TetherVersion.release)"
    )

    @Option(name: .long, help: "Control socket of the agent.")
    var socket: String = "/run/tether/tetherd.sock"

    func run() async throws {
        FileHandle.standardError.write(Data("tetherctl: the control commands are not part of this build yet\n".utf8))
        throw ExitCode(1)
    }
}
