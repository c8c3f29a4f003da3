/// What a user may do with a partition (`[[grant]] access`).
public enum PartitionAccess: String, Sendable, Hashable, Codable, CaseIterable {
    case read
    case readwrite

    public var canWrite: Bool { self == .readwrite }
}
