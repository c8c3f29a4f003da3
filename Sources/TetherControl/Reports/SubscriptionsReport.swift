/// The result of `subscriptions` (`tetherctl subscriptions PARTITION`) and of
/// `set-subscriptions`: the subscriptions the partition's store holds and those it wants (the
/// set made at run time, else the configured one), and whether a change from one to the other
/// is pending. A set is its subscriptions, one a line (`orders WHERE total > 10`, or the table
/// alone); `null` is the whole partition. Keys are never left out (`runtime`, `configured` and
/// `configured_digest` come together, from agents with the `set-subscriptions` capability).
public struct SubscriptionsReport: Sendable, Hashable, Codable {
    public var partition: String
    /// Whether the partition has a store yet (a new device holds nothing until it bootstraps,
    /// and then holds `wanted`).
    public var hasStore: Bool
    /// What the store holds; null: the whole partition (or nothing yet, without a store).
    public var held: [String]?
    /// 16 hex digits naming the held set, `whole` for the whole partition.
    public var heldDigest: String
    /// What the partition wants: the set made at run time when ``runtime`` is true, else what
    /// `[[partition.subscription]]` asks for; null: the whole partition.
    public var wanted: [String]?
    public var wantedDigest: String
    /// True while the store holds another set than the wanted one: the server changes its
    /// rows at the partition's next bind, and the partition is not synced until it has.
    public var changePending: Bool
    /// Whether ``wanted`` was made at run time (`set-subscriptions`) and overrides the
    /// configuration; nil from an agent without the `set-subscriptions` capability.
    public var runtime: Bool?
    /// What `[[partition.subscription]]` asks for (null: the whole partition); in force again
    /// once the set made at run time is cleared.
    public var configured: [String]?
    /// ``configured``'s digest; nil from an agent without the `set-subscriptions` capability.
    public var configuredDigest: String?

    public init(
        partition: String, hasStore: Bool, held: [String]?, heldDigest: String, wanted: [String]?, wantedDigest: String,
        changePending: Bool, runtime: Bool? = nil, configured: [String]? = nil, configuredDigest: String? = nil
    ) {
        self.partition = partition
        self.hasStore = hasStore
        self.held = held
        self.heldDigest = heldDigest
        self.wanted = wanted
        self.wantedDigest = wantedDigest
        self.changePending = changePending
        self.runtime = runtime
        self.configured = configured
        self.configuredDigest = configuredDigest
    }

    enum CodingKeys: String, CodingKey {
        case partition, held, wanted, runtime, configured
        case configuredDigest = "configured_digest"
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
        if let runtime {
            try c.encode(runtime, forKey: .runtime)
            try c.encode(configured, forKey: .configured)
            try c.encode(configuredDigest, forKey: .configuredDigest)
        }
    }
}
