import ArgumentParser
import Foundation
import Glibc
import TetherServer
import TetherTOML

/// `tether-server token new USER`: a new token for a `[[user]]` of the config file (offline,
/// like `restore-backup`; the running server takes it at its next reload).
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Make tokens for the users of the config file.",
        subcommands: [TokenNew.self])
}

struct TokenNew: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new",
        abstract: "Write a new random token to a user's token_file (mode 0600) and print it once for the device.",
        discussion: """
            The token (256 random bits, 64 hex digits) is printed on stdout only: put it in the \
            device's /etc/tether/token (mode 0600, owner tether). The file is written as a whole, \
            mode 0600; run as root, it is given to the account tether-server (see --owner). \
            The server takes the new token at its next reload: systemctl reload tether-server.
            """)

    @Argument(help: "The [[user]] name, as in the config file.")
    var user: String?

    @Flag(name: .long, help: "Make the admin token instead (the config file's admin_token_file).")
    var admin = false

    @Option(name: .long, help: "Server config file naming the user and its token_file.")
    var config: String = ServerConfiguration.defaultPath

    @Option(name: .long, help: "Write the token to this file instead of the user's token_file.")
    var out: String?

    @Option(name: .long, help: "Account that owns the file (default when run as root: tether-server, if it exists).")
    var owner: String?

    @Flag(name: .long, help: "Replace an existing token file.")
    var force = false

    func validate() throws {
        if (user == nil) == (admin == false) { throw ValidationError("give a USER or --admin (one of them)") }
    }

    func run() throws {
        let path = try out ?? tokenFile()
        var account: (uid: uid_t, gid: gid_t)?
        if let owner {
            guard let found = TokenMinter.account(owner) else { throw CommandFailure.usage("--owner: no account named \(owner)") }
            account = found
        } else if geteuid() == 0 {
            account = TokenMinter.account("tether-server")
        }
        let token = TokenMinter.newToken()
        do {
            try TokenMinter.write(token, to: path, owner: account, replace: force)
        } catch {
            throw CommandFailure.runtime(error.description)
        }
        print(token)
        printError("tether-server: wrote a new token for \(user ?? "the admin API") to \(path) (mode 0600); reload the server to use it")
    }

    private func tokenFile() throws -> String {
        let text: String
        do {
            text = try String(contentsOfFile: config, encoding: .utf8)
        } catch {
            throw CommandFailure.usage("cannot read \(config): give --config FILE, or --out FILE")
        }
        let parsed: ServerConfiguration
        do {
            parsed = try ServerConfiguration.parse(toml: text, file: config)
        } catch {
            throw CommandFailure.usage(error.problems.map(\.description))
        }
        guard let user else { return parsed.adminTokenFile }
        guard let entry = parsed.users.first(where: { $0.name == user }) else {
            throw CommandFailure.usage("\(config): no [[user]] is named \(user.debugDescription); add one with its token_file, or give --out FILE")
        }
        return entry.tokenFile
    }
}
