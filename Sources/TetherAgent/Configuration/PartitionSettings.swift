import TetherProtocol

/// One `[[partition]]`: its name, store path, reset and event settings (inherited from
/// `[reset]` and `[events]`).
package struct PartitionSettings: Sendable, Hashable {
    package var name: PartitionName
    package var storePath: String
    package var reset: ResetSettings
    package var events: EventSettings

    package init(name: PartitionName, storePath: String, reset: ResetSettings, events: EventSettings = EventSettings()) {
        self.name = name
        self.storePath = storePath
        self.reset = reset
        self.events = events
    }
}
