import Testing
import TetherTOML
@testable import TetherServer

/// `[[grant.write]]` (issue 51): write rules parse with their filter's syntax checked; a bad
/// one names the key and line.
@Suite struct ServerConfigurationWriteRuleTests {
    static func parse(_ rules: String, access: String = "readwrite") throws -> ServerConfiguration {
        try ServerConfiguration.parse(toml: """
            admin_token_file = "/a"
            [[user]]
            name = "u"
            token_file = "/u.token"
            [[grant]]
            user = "u"
            partitions = ["catalog"]
            access = "\(access)"
            \(rules)
            """, file: "f.toml")
    }

    @Test func aGrantCarriesItsWriteRules() throws {
        let config = try Self.parse("""
            [[grant.write]]
            table = "items"
            where = "shop = {tag:shop}"
            read_only = ["price"]
            [[grant.write]]
            table = "notes"
            read_only = ["author"]
            """)
        #expect(config.grants.first?.writeRules == [
            .init(table: "items", filter: "shop = {tag:shop}", readOnly: ["price"]), .init(table: "notes", filter: nil, readOnly: ["author"]),
        ])
    }

    @Test(arguments: [
        ("[[grant.write]]\ntable = \"items\"\nwhere = \"shop = \"", "f.toml:11: grant[0].write[0].where:"),
        ("[[grant.write]]\ntable = \"items\"", "a write rule needs a where filter, read_only columns, or both"),
        ("[[grant.write]]\ntable = \"it ems\"\nread_only = [\"a\"]", "grant[0].write[0].table: table name"),
        ("[[grant.write]]\ntable = \"items\"\nread_only = [\"p rice\"]", "read_only[0]: column name"),
        ("[[grant.write]]\nwhere = \"a = 1\"", "grant[0].write[0].table"),
    ])
    func aBadRuleNamesItsKeyAndLine(rules: String, problem: String) {
        let error = #expect(throws: ConfigError.self) { try Self.parse(rules) }
        #expect(error?.description.contains(problem) == true, "\(error.map { "\($0)" } ?? "")")
    }

    @Test func aReadGrantMayNotCarryWriteRules() {
        let error = #expect(throws: ConfigError.self) { try Self.parse("[[grant.write]]\ntable = \"items\"\nread_only = [\"a\"]", access: "read") }
        #expect(error?.description.contains("write rules belong to readwrite grants") == true)
    }
}
