extension Tether {
    /// One subscription of a partition as an application or `tetherctl subscriptions P set`
    /// asks for it (docs/subscriptions.md): a table, and a filter in Tether's filter language
    /// (`where`; nil: every row of the table). The agent checks both before it changes anything.
    public struct Subscription: Sendable, Hashable, Codable, CustomStringConvertible {
        public var table: String
        /// The filter's text, e.g. `shop_id = {tag:shop}`; nil: the whole table.
        public var filter: String?

        public init(table: String, where filter: String? = nil) {
            self.table = table
            self.filter = filter
        }

        enum CodingKeys: String, CodingKey {
            case table
            case filter = "where"
        }

        /// `table WHERE filter`, or the table alone (as `tetherctl subscriptions` shows them).
        public var description: String { filter.map { "\(table) WHERE \($0)" } ?? table }
    }
}
