import Testing
import TetherServer
import TetherTOML

@Suite struct StorageConfigurationTests {
    let root = "admin_token_file = \"/a\"\n"

    @Test func sqliteIsTheDefault() throws {
        let config = try ServerConfiguration.parse(toml: root, file: "f.toml")
        #expect(config.storage == .sqlite && config.storage.postgres == nil)
        let explicit = try ServerConfiguration.parse(toml: root + "[storage]\nkind = \"sqlite\"\n", file: "f.toml")
        #expect(explicit.storage == .sqlite)
    }

    @Test func postgresqlWithURLAndPasswordFile() throws {
        let config = try ServerConfiguration.parse(toml: root + """
            [storage]
            kind = "postgresql"
            url = "postgresql://tether@db.example:6543/fleet?sslmode=require"
            password_file = "/etc/tether/pg.password"
            """, file: "f.toml")
        #expect(config.storage.kind == .postgresql)
        #expect(config.storage.postgres == PostgresLocation(
            host: "db.example", port: 6543, user: "tether", database: "fleet", tls: .require, passwordFile: "/etc/tether/pg.password"))
        #expect(config.storage.postgres?.description == "postgresql://tether@db.example:6543/fleet")
        #expect(config.storage.maxStateDownloads == StorageConfiguration.defaultMaxStateDownloads)
    }

    @Test func maxStateDownloadsIsReadForPostgreSQL() throws {
        let config = try ServerConfiguration.parse(toml: root + """
            [storage]
            kind = "postgresql"
            url = "postgresql://tether@db/fleet"
            max_state_downloads = 8
            """, file: "f.toml")
        #expect(config.storage.maxStateDownloads == 8)
    }

    @Test func urlDefaultsAndForms() throws {
        func parse(_ url: String) throws -> PostgresLocation { try PostgresLocation.parse(url: url).get() }
        #expect(try parse("postgres://tether@db") == PostgresLocation(host: "db", user: "tether", database: "tether"))
        #expect(try parse("postgresql://u@[::1]:5433/d").host == "::1")
        #expect(try parse("postgresql://u@[::1]:5433/d").port == 5433)
        #expect(try parse("postgresql://u%40corp@h/d%20b").user == "u@corp")
        #expect(try parse("postgresql://u@h/d%20b").database == "d b")
        #expect(try parse("postgresql://u@h/d?sslmode=disable").tls == .disable)
        #expect(try parse("postgresql://u@h/d").tls == .prefer)
    }

    @Test func everyProblemNamesKeyAndLineAndNoPasswordIsEchoed() {
        let cases: [(String, String)] = [
            ("[storage]\nkind = \"postgresql\"\n", "f.toml:2: storage.url: missing required key (a string)"),
            ("[storage]\nkind = \"mysql\"\n", "f.toml:3: storage.kind: \"mysql\" is not one of \"sqlite\", \"postgresql\""),
            ("[storage]\nkind = \"postgresql\"\nurl = \"postgresql://tether:hunter2@db/t\"\n",
             "f.toml:4: storage.url: the URL carries a password: put it in password_file instead"),
            ("[storage]\nkind = \"postgresql\"\nurl = \"http://tether:hunter2@db/t\"\n",
             "f.toml:4: storage.url: the URL must start with postgresql:// or postgres://"),
            ("[storage]\nkind = \"postgresql\"\nurl = \"postgresql://db/t\"\n", "f.toml:4: storage.url: the URL names no user"),
            ("[storage]\nkind = \"postgresql\"\nurl = \"postgresql://u@db:99999/t\"\n", "f.toml:4: storage.url: the URL's port must be 1-65535"),
            ("[storage]\nkind = \"postgresql\"\nurl = \"postgresql://u@db/t?sslmode=verify\"\n", "f.toml:4: storage.url: sslmode must be"),
            ("[storage]\nkind = \"postgresql\"\nurl = \"postgresql://u@db/t\"\npassword_file = \"pg.password\"\n",
             "f.toml:5: storage.password_file: \"pg.password\" must be an absolute path"),
            ("[storage]\nurl = \"postgresql://u@db/t\"\n", "f.toml:3: storage.url: url is read only with kind = \"postgresql\""),
            ("[storage]\nkind = \"postgresql\"\nurl = \"postgresql://u@db/t\"\nmax_state_downloads = 0\n",
             "f.toml:5: storage.max_state_downloads: 0 is out of range 1...1000"),
            ("[storage]\nmax_state_downloads = 4\n",
             "f.toml:3: storage.max_state_downloads: max_state_downloads is read only with kind = \"postgresql\""),
            ("[storage]\nkind = \"postgresql\"\nurl = \"postgresql://u@db/t\"\nhost = \"db\"\n", "f.toml:5: storage.host: unknown key"),
        ]
        for (text, expected) in cases {
            do {
                _ = try ServerConfiguration.parse(toml: root + text, file: "f.toml")
                Issue.record("accepted: \(text)")
            } catch {
                let lines = error.problems.map(\.description)
                #expect(lines.contains { $0.hasPrefix(expected) }, "\(lines)")
                #expect(!lines.joined().contains("hunter2"))
            }
        }
    }

    @Test func theSecretNeverPrints() {
        let secret = Secret("hunter2")
        #expect("\(secret)" == "<secret>" && String(reflecting: secret) == "<secret>" && secret.value == "hunter2")
    }
}
