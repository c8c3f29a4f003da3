public import TetherProtocol

/// One `[[partition]]`: its name, store path, reset and event settings (inherited from
/// `[reset]` and `[events]`).
public struct PartitionSettings: Sendable, Hashable {
    public var name: PartitionName
    public var storePath: String
    public var reset: ResetSettings
    public var events: EventSettings

    public init(name: PartitionName, storePath: String, reset: ResetSettings, events: EventSettings = EventSettings()) {
        self.name = name
        self.storePath = storePath
        self.reset = reset
        self.events = events
    }
}
