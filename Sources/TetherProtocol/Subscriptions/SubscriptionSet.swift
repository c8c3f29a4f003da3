/// A partition's subscriptions, sorted and without duplicates: what a device asks for and what
/// its store holds. `nil` where a set is optional means the whole partition (no subscriptions).
package struct SubscriptionSet: Sendable, Hashable, CustomStringConvertible {
    package let subscriptions: [Subscription]

    /// Sorts and removes duplicates; refuses more than ``SubscriptionSetLimits/maxSubscriptions``.
    package init(_ subscriptions: [Subscription]) throws(SubscriptionSetError) {
        let unique = Array(Set(subscriptions)).sorted()
        guard unique.count <= SubscriptionSetLimits.maxSubscriptions else {
            throw SubscriptionSetError(
                .tooMany("\(unique.count) subscriptions; a partition may have at most \(SubscriptionSetLimits.maxSubscriptions)"),
                subscription: nil)
        }
        self.subscriptions = unique
    }

    /// The empty set: a partition that subscribes to nothing holds no rows.
    package static let empty = try! SubscriptionSet([])

    package var tables: Set<String> { Set(subscriptions.map(\.table)) }

    /// One subscription per line, as `tetherctl` and status show them.
    package var description: String { subscriptions.map(\.description).joined(separator: "; ") }

    /// A stable 64-bit digest of the set (FNV-1a over its canonical encoding): events, status
    /// and the server's logs name a set by it without its text.
    package var digest: UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in canonicalBytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// `digest` as 16 hex digits.
    package var digestText: String {
        let hex = String(digest, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The set's encoding, the same on every device for the same set (the wire's).
    package var canonicalBytes: [UInt8] {
        var w = ByteWriter()
        encode(into: &w)
        return w.bytes
    }

    /// Checks every subscription against `schema`: the first failure is thrown, naming it.
    package func checked(against schema: Schema) throws(SubscriptionSetError) -> [CheckedSubscription] {
        var checked: [CheckedSubscription] = []
        for subscription in subscriptions { checked.append(try subscription.checked(against: schema)) }
        return checked
    }
}

package enum SubscriptionSetLimits {
    /// Subscriptions per partition: a bound on what the server evaluates per row and session.
    package static let maxSubscriptions = 256
}

/// Why a subscription set was refused, naming the subscription when one is at fault.
package struct SubscriptionSetError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Reason: Sendable, Hashable {
        case unknownTable(String)
        case filter(SubscriptionFilterError)
        case tooMany(String)
    }

    package let reason: Reason
    package let subscription: Subscription?

    package init(_ reason: Reason, subscription: Subscription?) {
        self.reason = reason
        self.subscription = subscription
    }

    package var description: String {
        let which = subscription.map { "subscription to \($0.table)" + ($0.filter.map { " where \($0)" } ?? "") + ": " } ?? ""
        return switch reason {
        case .unknownTable(let message): which + message
        case .filter(let error): which + error.description
        case .tooMany(let message): message
        }
    }
}
