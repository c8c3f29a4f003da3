import Foundation
import Testing
import TetherServer
import TetherTestSupport
import TetherTOML

/// A token must be one identity's own: the server refuses to start (and a reload is refused)
/// when two users share one, or a device token is the admin token.
@Suite struct SharedTokenTests {
    static func load(admin: String, users: [(String, String)]) throws -> Result<LoadedConfiguration, ConfigError> {
        let dir = try TemporaryDirectory(prefix: "tether-tokens")
        defer { dir.remove() }
        let adminFile = try dir.write("admin.token", admin + "\n")
        chmod(adminFile, 0o600)
        var text = """
            admin_token_file = "\(adminFile)"
            data_dir = "\(dir.appending("data"))"
            schema = "\(try dir.write("schema.toml", Cluster.schema))"

            """
        for (name, token) in users {
            let file = try dir.write("\(name).token", token + "\n")
            chmod(file, 0o600)
            text += "[[user]]\nname = \"\(name)\"\ntoken_file = \"\(file)\"\n"
        }
        let path = try dir.write("server.toml", text)
        do { return .success(try LoadedConfiguration.load(path: path)) } catch { return .failure(error) }
    }

    static func problems(_ result: Result<LoadedConfiguration, ConfigError>) -> [String] {
        guard case .failure(let error) = result else { return [] }
        return error.problems.map(\.description)
    }

    @Test func distinctTokensLoad() throws {
        let loaded = try Self.load(admin: "admin-secret", users: [("a", "a-secret"), ("b", "b-secret")])
        #expect(Self.problems(loaded).isEmpty, "\(Self.problems(loaded))")
    }

    @Test func twoUsersWithOneTokenAreRefused() throws {
        let problems = Self.problems(try Self.load(admin: "admin-secret", users: [("a", "same"), ("b", "other"), ("c", "same")]))
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.contains("user[2].token_file") == true)
        #expect(problems.first?.contains("user c has the same token as user a (user[0])") == true)
        #expect(!problems.joined().contains("same\n"), "never the token itself")
    }

    @Test func aDeviceTokenThatIsTheAdminTokenIsRefused() throws {
        let problems = Self.problems(try Self.load(admin: "shared", users: [("a", "shared")]))
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.contains("admin_token_file") == true && problems.first?.contains("also the token of user a") == true)
    }
}
