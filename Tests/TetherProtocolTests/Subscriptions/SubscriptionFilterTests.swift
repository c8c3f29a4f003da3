import Testing
import TetherProtocol

/// ``SubscriptionFilter``: the expression language parsed, checked against a table, resolved
/// with a device's parameters and evaluated with SQL's three-valued logic; every refusal says
/// what and where.
struct SubscriptionFilterTests {
    static let catalog = TableSchema(name: "catalog", primaryKey: "sku", columns: [
        ColumnSchema(name: "sku", type: .text),
        ColumnSchema(name: "shop_id", type: .integer),
        ColumnSchema(name: "zone", type: .text, nullable: true),
        ColumnSchema(name: "price", type: .real),
        ColumnSchema(name: "promoted", type: .boolean),
        ColumnSchema(name: "updated_at", type: .text),
        ColumnSchema(name: "taken", type: .integer, nullable: true),
        ColumnSchema(name: "picture", type: .blob, nullable: true),
        ColumnSchema(name: "order", type: .text, nullable: true),
    ])
    static let till = FilterParameters(name: "till-7", id: "5a11", tags: ["shop": "17", "zone": "north"])
    /// 2026-11-30T12:00:00Z.
    static let now = 1_796_040_000.0

    static func filter(_ text: String) throws -> ResolvedFilter {
        try SubscriptionFilter(text, table: catalog).resolved(with: till, now: now, schema: catalog)
    }

    static func row(
        shop: Int64 = 17, zone: String? = "north", price: Double = 9.5, promoted: Bool = false, updated: String = "2026-11-29T08:00:00.000Z",
        taken: Int64? = nil
    ) -> [String: FieldValue] {
        [
            "sku": .text("a-1"), "shop_id": .integer(shop), "zone": zone.map { .text($0) } ?? .null, "price": .real(price),
            "promoted": .integer(promoted ? 1 : 0), "updated_at": .text(updated), "taken": taken.map { .integer($0) } ?? .null,
            "picture": .null, "order": .null,
        ]
    }

    @Test func aFleetFilterParsesResolvesAndSelects() throws {
        let filter = try Self.filter("shop_id = {tag:shop} AND (zone IN ('north', {tag:zone}) OR promoted) AND updated_at >= now() - 7d")
        #expect(filter.matches(Self.row()))
        #expect(!filter.matches(Self.row(shop: 18)))
        #expect(filter.matches(Self.row(zone: "south", promoted: true)))
        #expect(!filter.matches(Self.row(zone: "south")))
        #expect(!filter.matches(Self.row(updated: "2026-11-20T00:00:00.000Z")), "older than 7 days")
    }

    @Test func nullIsUnknownAndOnlyTrueMatches() throws {
        #expect(!(try Self.filter("zone = 'north'")).matches(Self.row(zone: nil)))
        #expect(!(try Self.filter("zone != 'north'")).matches(Self.row(zone: nil)))
        #expect(!(try Self.filter("NOT zone = 'north'")).matches(Self.row(zone: nil)), "NOT unknown is unknown")
        #expect(!(try Self.filter("zone NOT IN ('south')")).matches(Self.row(zone: nil)))
        #expect(try Self.filter("zone IS NULL").matches(Self.row(zone: nil)))
        #expect(try Self.filter("zone IS NOT NULL OR price > 1").matches(Self.row(zone: nil)), "unknown OR true is true")
        #expect(!(try Self.filter("zone IS NOT NULL AND price > 1")).matches(Self.row(zone: nil)))
        #expect(!(try Self.filter("taken BETWEEN 1 AND 5")).matches(Self.row(taken: nil)))
    }

    @Test func comparisonsRangesAndNumbers() throws {
        #expect(try Self.filter("price BETWEEN 9 AND 10").matches(Self.row()))
        #expect(try Self.filter("price NOT BETWEEN 10 AND 20").matches(Self.row()))
        #expect(try Self.filter("shop_id >= 17 AND shop_id <= 17 AND shop_id <> 16 AND shop_id < 18 AND shop_id > -1").matches(Self.row()))
        #expect(try Self.filter("price = 9.5 AND shop_id = 17.0").matches(Self.row()), "an integer equals a real of its value")
        #expect(try Self.filter("promoted = FALSE AND NOT promoted").matches(Self.row()))
        #expect(try Self.filter("\"order\" IS NULL").matches(Self.row()), "a quoted name that is a keyword")
        #expect(try Self.filter("picture IS NULL").matches(Self.row()), "a blob column's one test")
        #expect(try Self.filter("sku = 'a-1' and zone in ('North', 'north')").matches(Self.row()), "keywords in any case; text by bytes")
        #expect(try Self.filter("updated_at < 'it''s'").matches(Self.row()), "'' inside a string")
    }

    @Test func nowIsTheColumnsKindOfTime() throws {
        let schema = Self.catalog
        let text = try SubscriptionFilter("updated_at >= now() - 36h", table: schema).resolved(with: Self.till, now: Self.now, schema: schema)
        #expect(text.root == .compare(column: "updated_at", .greaterOrEqual, .text("2026-11-29T00:00:00.000Z")))
        let integer = try SubscriptionFilter("taken < now() + 90s", table: schema).resolved(with: Self.till, now: Self.now, schema: schema)
        #expect(integer.root == .compare(column: "taken", .less, .integer(1_796_040_090)))
    }

    @Test func iso8601DatesAreTheCalendars() {
        #expect(SubscriptionFilter.iso8601(0) == "1970-01-01T00:00:00.000Z")
        #expect(SubscriptionFilter.iso8601(951_782_400.25) == "2000-02-29T00:00:00.250Z")
        #expect(SubscriptionFilter.iso8601(-1) == "1969-12-31T23:59:59.000Z")
        #expect(SubscriptionFilter.iso8601(Self.now) == "2026-11-30T12:00:00.000Z")
    }

    @Test func parametersComeFromTheDevice() throws {
        let filter = try SubscriptionFilter("sku = {name} OR sku = {id} OR shop_id = {tag:shop}", table: Self.catalog)
        #expect(filter.parameters == [.name, .id, .tag("shop")])
        let missing = #expect(throws: SubscriptionFilterError.self) {
            try SubscriptionFilter("zone = {tag:region}", table: Self.catalog).resolved(with: Self.till, now: Self.now, schema: Self.catalog)
        }
        #expect(missing?.description == "the device has no {tag:region}")
        let notInteger = #expect(throws: SubscriptionFilterError.self) {
            try SubscriptionFilter("shop_id = {tag:zone}", table: Self.catalog).resolved(with: Self.till, now: Self.now, schema: Self.catalog)
        }
        #expect(notInteger?.description == "the device's {tag:zone} is not an integer, as column shop_id needs")
    }

    static let refusals: [(String, String)] = [
        ("shop_id = ", "expected a value, a {parameter} or now() (at byte 11)"),
        ("shop_id = 17 AND", "expected a column name (at byte 17)"),
        ("(shop_id = 17", "expected ')' (at byte 14)"),
        ("shop_id = 17 17", "expected AND, OR or the end of the filter (at byte 14)"),
        ("zone = 'north", "a string that does not end (at byte 8)"),
        ("zone = NULL", "a comparison with NULL is never true: use IS NULL or IS NOT NULL (at byte 8)"),
        ("zone = sku", "expected a value, a {parameter} or now(): a column cannot be compared with another column (at byte 8)"),
        ("zone = {shop}", "unknown parameter {shop}: {name}, {id} or {tag:KEY} (at byte 8)"),
        ("zone ! 'a'", "'!' must be followed by '=' (at byte 6)"),
        ("taken > now() - 7", "expected a duration after now() - (90s, 15m, 36h, 7d, 2w) (at byte 18)"),
        ("taken > 7days", "a number followed by letters (durations are 90s, 15m, 36h, 7d, 2w) (at byte 9)"),
        ("zone IS 'a'", "expected NULL after IS (at byte 9)"),
        ("zone NOT 'a'", "expected IN or BETWEEN after NOT (at byte 10)"),
        ("zone; DROP TABLE catalog", "unexpected character ';' (at byte 5)"),
        ("colour = 'red'", "no column colour in table catalog (its columns: order, picture, price, promoted, shop_id, sku, taken, updated_at, zone)"),
        ("shop_id = 'x'", "integer column shop_id compared with text"),
        ("zone = 3", "text column zone compared with a number"),
        ("promoted > 0", "boolean column promoted is compared with = or != only"),
        ("promoted = 2", "boolean column promoted holds TRUE or FALSE"),
        ("zone", "column zone is not boolean: compare it with a value"),
        ("picture = 'x'", "blob column picture can only be tested with IS NULL"),
        ("price = {name}", "real column price compared with {name}, which is text"),
    ]

    @Test(arguments: refusals) func aBadFilterIsRefusedWithWhatAndWhere(text: String, message: String) {
        let error = #expect(throws: SubscriptionFilterError.self) { try SubscriptionFilter(text, table: Self.catalog) }
        #expect(error?.description == message)
    }

    @Test func theServerEvaluatesABoundedFilter() {
        let wide = "zone IN (" + (0...1_000).map { "'\($0)'" }.joined(separator: ", ") + ")"
        #expect(throws: SubscriptionFilterError.self) { try SubscriptionFilter(wide, table: Self.catalog) }
        let deep = String(repeating: "(", count: 17) + "promoted" + String(repeating: ")", count: 17)
        #expect(throws: SubscriptionFilterError.self) { try SubscriptionFilter(deep, table: Self.catalog) }
        let many = (0...64).map { "shop_id = \($0)" }.joined(separator: " OR ")
        #expect(throws: SubscriptionFilterError.self) { try SubscriptionFilter(many, table: Self.catalog) }
        let long = "sku = '" + String(repeating: "x", count: 4_096) + "'"
        #expect(throws: SubscriptionFilterError.self) { try SubscriptionFilter(long, table: Self.catalog) }
        #expect(throws: Never.self) { try SubscriptionFilter((0..<60).map { "shop_id = \($0)" }.joined(separator: " OR "), table: Self.catalog) }
    }

    @Test func sqlHoldsPlaceholdersOnly() throws {
        let filter = try Self.filter("zone IN ('a''; DROP TABLE x; --', {tag:zone}) AND NOT promoted AND price NOT BETWEEN 1 AND 2 AND taken IS NULL")
        let sql = filter.sql(placeholder: { "$\($0)" }, quote: { "\"\($0)\"" })
        #expect(sql.text == "(\"zone\" IN ($1, $2) AND NOT (\"promoted\" <> $3) AND \"price\" NOT BETWEEN $4 AND $5 AND \"taken\" IS NULL)")
        #expect(sql.arguments == [.text("a'; DROP TABLE x; --"), .text("north"), .integer(0), .integer(1), .integer(2)])
    }
}
