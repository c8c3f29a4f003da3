extension SubscriptionSet {
    /// The digest a message names a set by when the set may be the whole partition
    /// (``SubscriptionChunk/setDigest`` of a change back to no subscriptions): 0 for nil, else
    /// ``digest``.
    package static func digest(of set: SubscriptionSet?) -> UInt64 { set?.digest ?? 0 }

    /// ``digestText`` of a set that may be the whole partition: `whole` for nil.
    package static func digestText(of set: SubscriptionSet?) -> String { set?.digestText ?? "whole" }
}
