import ArgumentParser
import Foundation

/// Runs a command with the exit statuses of docs/contract.md "Programs": 0 success, 1 runtime error, 2 usage or
/// configuration error (ArgumentParser's own is 64), and whatever `ExitCode` a command throws.
/// Errors are one line on stderr.
package enum CommandLineExit {
    package static func main<Command: AsyncParsableCommand>(_ type: Command.Type) async -> Never {
        do {
            var command = try type.parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            exit(0)
        } catch {
            let code = type.exitCode(for: error)
            if code == .success {
                // --help, --version
                print(type.fullMessage(for: error))
                exit(0)
            }
            if error is ExitCode {
                exit(code.rawValue)
            }
            let message = type.fullMessage(for: error)
            if !message.isEmpty {
                FileHandle.standardError.write(Data((message.hasSuffix("\n") ? message : message + "\n").utf8))
            }
            // ArgumentParser reports usage errors as EX_USAGE (64); docs/contract.md "Programs" says 2.
            exit(code == .validationFailure ? 2 : (code.rawValue == 64 ? 2 : code.rawValue))
        }
    }
}
