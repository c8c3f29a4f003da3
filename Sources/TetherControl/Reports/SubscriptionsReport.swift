/// The result of `subscriptions` (`tetherctl subscriptions PARTITION`): the subscriptions the
/// partition's store holds and those configured, and whether a change from one to the other
/// is pending. A set is its subscriptions, one a line (`orders WHERE total > 10`, or the table
/// alone); `null` is the whole partition. Keys are never left out.
public struct SubscriptionsReport: Sendable, Hashable, Codable {
    public var partition: String
    /// Whether the partition has a store yet (a new device holds nothing until it bootstraps,
    /// and then holds `wanted`).
    public var hasStore: Bool
    /// What the store holds; null: the whole partition (or nothing yet, without a store).
    public var held: [String]?
    /// 16 hex digits naming the held set, `whole` for the whole partition.
    public var heldDigest: String
    /// What `[[partition.subscription]]` asks for; null: the whole partition.
    public var wanted: [String]?
    public var wantedDigest: String
    /// True while the store holds another set than the configured one: the server changes its
    /// rows at the partition's next bind, and the partition is not synced until it has.
    public var changePending: Bool

    public init(
        partition: String, hasStore: Bool, held: [String]?, heldDigest: String, wanted: [String]?, wantedDigest: String,
        changePending: Bool
    ) {
        self.partition = partition
        self.hasStore = hasStore
        self.held = held
        self.heldDigest = heldDigest
        self.wanted = wanted
        self.wantedDigest = wantedDigest
        self.changePending = changePending
    }

    enum CodingKeys: String, CodingKey {
        case partition, held, wanted
        case hasStore = "has_store", heldDigest = "held_digest", wantedDigest = "wanted_digest", changePending = "change_pending"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(partition, forKey: .partition)
        try c.encode(hasStore, forKey: .hasStore)
        try c.encode(held, forKey: .held)
        try c.encode(heldDigest, forKey: .heldDigest)
        try c.encode(wanted, forKey: .wanted)
        try c.encode(wantedDigest, forKey: .wantedDigest)
        try c.encode(changePending, forKey: .changePending)
    }
}
