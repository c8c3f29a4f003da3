/// What a user may do with a partition (`[[grant]] access`).
package enum PartitionAccess: String, Sendable, Hashable, Codable, CaseIterable {
    case read
    case readwrite

    package var canWrite: Bool { self == .readwrite }
}
