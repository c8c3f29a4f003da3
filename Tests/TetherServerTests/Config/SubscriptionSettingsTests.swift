import Testing
import TetherProtocol
import TetherTOML
@testable import TetherServer

/// `[subscriptions]`: queryable columns parsed and checked against the schema, the bound read.
@Suite struct SubscriptionSettingsTests {
    static let base = "admin_token_file = \"/etc/tether/admin.token\"\n"

    @Test func queryableColumnsAndTheBoundAreRead() throws {
        let configuration = try ServerConfiguration.parse(
            toml: Self.base + "[subscriptions]\nqueryable = [\"orders.total\", \"items.shop\"]\nmax_unindexed_rows = 5\n", file: "s.toml")
        #expect(configuration.subscriptions.queryable == [
            QueryableColumn(table: "orders", column: "total"), QueryableColumn(table: "items", column: "shop"),
        ])
        #expect(configuration.subscriptions.maxUnindexedRows == 5)
        #expect(try ServerConfiguration.parse(toml: Self.base, file: "s.toml").subscriptions == SubscriptionSettings())
    }

    @Test func badNamesAreErrorsNamingKeyAndLine() {
        for (text, expected) in [
            ("queryable = [\"total\"]", "is not table.column"), ("queryable = [\"a.b\", \"a.b\"]", "listed twice"),
            ("queryable = [\"a.\"]", "is not table.column"), ("max_unindexed_rows = -1", "max_unindexed_rows"),
        ] {
            #expect {
                try ServerConfiguration.parse(toml: Self.base + "[subscriptions]\n" + text + "\n", file: "s.toml")
            } throws: { error in
                guard let error = error as? ConfigError else { return false }
                return error.description.contains(expected) && error.description.contains("s.toml:3")
            }
        }
    }

    @Test func columnsAreCheckedAgainstTheSchema() {
        let schema = Schema(version: 1, tables: [TableSchema(name: "orders", primaryKey: "id", columns: [
            ColumnSchema(name: "id", type: .text), ColumnSchema(name: "total", type: .real, nullable: true),
        ])])
        let settings = SubscriptionSettings(queryable: [
            QueryableColumn(table: "orders", column: "total"), QueryableColumn(table: "orders", column: "id"),
            QueryableColumn(table: "orders", column: "nope"), QueryableColumn(table: "items", column: "shop"),
        ])
        let problems = settings.problems(against: schema)
        #expect(problems.count == 3)
        #expect(problems[0].contains("primary key") && problems[1].contains("no column") && problems[2].contains("no table"))
    }
}
