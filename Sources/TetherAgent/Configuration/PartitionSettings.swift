import TetherProtocol

/// One `[[partition]]`: its name, store path, reset and event settings (inherited from
/// `[reset]` and `[events]`), and its subscriptions (`[[partition.subscription]]`).
package struct PartitionSettings: Sendable, Hashable {
    package var name: PartitionName
    package var storePath: String
    package var reset: ResetSettings
    package var events: EventSettings
    /// The rows the store is to hold (issue 51, subscriptions.md): nil when the partition lists
    /// no `[[partition.subscription]]`, the whole partition.
    package var subscriptions: SubscriptionSet?

    package init(
        name: PartitionName, storePath: String, reset: ResetSettings, events: EventSettings = EventSettings(),
        subscriptions: SubscriptionSet? = nil
    ) {
        self.name = name
        self.storePath = storePath
        self.reset = reset
        self.events = events
        self.subscriptions = subscriptions
    }
}
