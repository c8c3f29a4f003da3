public import TetherProtocol

/// One `[[partition]]`: its name, store path and reset settings (inherited from `[reset]`).
public struct PartitionSettings: Sendable, Hashable {
    public var name: PartitionName
    public var storePath: String
    public var reset: ResetSettings

    public init(name: PartitionName, storePath: String, reset: ResetSettings) {
        self.name = name
        self.storePath = storePath
        self.reset = reset
    }
}
