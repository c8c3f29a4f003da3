import ArgumentParser
import Foundation

/// Runs the command line and maps outcomes to docs/contract.md "Programs" exit codes: 0 success, 1 runtime
/// error, 2 usage or configuration error. Errors are one line per problem on stderr.
@main
enum Main {
    static func main() async {
        // Nothing tether-server writes is for other users, whatever umask it was started with:
        // the database and its -wal/-shm, the data directory, backups (the server's temporary
        // copy and the file `admin backup --out` writes). The unit sets UMask=0077 too. Files
        // meant for a group (ready files 0640, their directories 0750) are given their modes.
        umask(0o077)
        do {
            var command = try TetherServerCommand.parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
            exit(0)
        } catch let failure as CommandFailure {
            for line in failure.lines { printError(line) }
            exit(failure.exitCode)
        } catch {
            let code = TetherServerCommand.exitCode(for: error)
            let message = TetherServerCommand.fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { print(message) }
                exit(0)
            }
            if !message.isEmpty { printError(message) }
            if error is ExitCode { exit(code.rawValue == ExitCode.validationFailure.rawValue ? 2 : code.rawValue) }
            // Parse and validation errors are usage errors.
            exit(code == .validationFailure ? 2 : 1)
        }
    }
}

/// A failure already worded for the operator, with its exit code.
struct CommandFailure: Error {
    var lines: [String]
    var exitCode: Int32

    static func usage(_ lines: String...) -> CommandFailure { CommandFailure(lines: lines.map { "tether-server: \($0)" }, exitCode: 2) }
    static func usage(_ lines: [String]) -> CommandFailure { CommandFailure(lines: lines.map { "tether-server: \($0)" }, exitCode: 2) }
    static func runtime(_ lines: String...) -> CommandFailure { CommandFailure(lines: lines.map { "tether-server: \($0)" }, exitCode: 1) }
}

func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
