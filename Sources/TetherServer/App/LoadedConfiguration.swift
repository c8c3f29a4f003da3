import Foundation
import TetherProtocol
import TetherTOML

/// Everything read from disk at start and on reload: the config file, the token files and
/// the schema file. Every problem names the file, key and line.
package struct LoadedConfiguration: Sendable {
    package var configuration: ServerConfiguration
    package var users: UserDirectory
    package var adminToken: TokenDigest
    package var schema: Schema
    /// `[storage] password_file`'s content when PostgreSQL is used with one.
    package var storagePassword: Secret?

    package static func load(path: String) throws(ConfigError) -> LoadedConfiguration {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigError(file: path, "cannot read the configuration file: \(TokenFile.reason(error))")
        }
        let configuration = try ServerConfiguration.parse(toml: text, file: path)
        var problems: [ConfigProblem] = []
        var users = UserDirectory(entries: [])
        do {
            users = try UserDirectory.load(configuration)
        } catch {
            problems += error.problems
        }
        var adminToken = TokenDigest(token: "")
        switch TokenFile.read(configuration.adminTokenFile) {
        case .success(let token): adminToken = TokenDigest(token: token)
        case .failure(let error):
            problems.append(ConfigProblem(file: path, key: "admin_token_file", line: nil, message: error.description))
        }
        problems += Self.sharedTokens(users: users, admin: adminToken, file: path)
        var schema = Schema(version: 1, tables: [])
        do {
            let schemaText = try String(contentsOfFile: configuration.schemaFile, encoding: .utf8)
            do {
                schema = try Schema.parse(toml: schemaText, file: configuration.schemaFile)
                problems += configuration.subscriptions.problems(against: schema).map {
                    ConfigProblem(file: path, key: "subscriptions.queryable", line: nil, message: $0)
                }
            } catch {
                problems += error.problems
            }
        } catch {
            problems.append(ConfigProblem(
                file: path, key: "schema", line: nil,
                message: "cannot read schema file \(configuration.schemaFile): \(TokenFile.reason(error))"))
        }
        var storagePassword: Secret? = nil
        if let file = configuration.storage.postgres?.passwordFile {
            switch TokenFile.read(file) {
            case .success(let password):
                storagePassword = Secret(password)
                if let problem = TokenFile.permissionProblem(file) {
                    problems.append(ConfigProblem(
                        file: path, key: "storage.password_file", line: nil,
                        message: problem.replacingOccurrences(of: "token file", with: "password file")))
                }
            case .failure(let error):
                problems.append(ConfigProblem(
                    file: path, key: "storage.password_file", line: nil,
                    message: error.description.replacingOccurrences(of: "token file", with: "password file")))
            }
        }
        for (key, file) in [("admin_token_file", configuration.adminTokenFile)]
            + configuration.users.enumerated().map({ ("user[\($0.offset)].token_file", $0.element.tokenFile) })
        where !problems.contains(where: { $0.key == key }) {
            if let problem = TokenFile.permissionProblem(file) {
                problems.append(ConfigProblem(file: path, key: key, line: nil, message: problem))
            }
        }
        // Problems found after parsing still name the line of their key.
        let lines = KeyLineIndex(text: text)
        problems = problems.map { problem in
            var located = problem
            if located.line == nil, located.file == path, !located.key.isEmpty { located.line = lines.line(of: located.key) }
            return located
        }
        if !problems.isEmpty { throw ConfigError(problems) }
        return LoadedConfiguration(
            configuration: configuration, users: users, adminToken: adminToken, schema: schema, storagePassword: storagePassword)
    }

    /// Tokens that are not one identity's own: two users with one token (its sessions would
    /// silently be the first user's), or a device token that is also the admin token (every
    /// device could administer the server). Compared as digests, in constant time.
    static func sharedTokens(users: UserDirectory, admin: TokenDigest, file: String) -> [ConfigProblem] {
        var problems: [ConfigProblem] = []
        for (j, entry) in users.entries.enumerated() {
            if let i = users.entries.prefix(j).firstIndex(where: { $0.digest.constantTimeEquals(entry.digest) }) {
                problems.append(ConfigProblem(
                    file: file, key: "user[\(j)].token_file", line: nil,
                    message: "user \(entry.name) has the same token as user \(users.entries[i].name) (user[\(i)]): every user needs a token of its own (tether-server token new \(entry.name))"))
            }
            if entry.digest.constantTimeEquals(admin) {
                problems.append(ConfigProblem(
                    file: file, key: "admin_token_file", line: nil,
                    message: "the admin token is also the token of user \(entry.name): the admin API needs a token no device has (tether-server token new --admin)"))
            }
        }
        return problems
    }
}
