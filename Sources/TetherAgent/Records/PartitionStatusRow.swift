public import TetherProtocol

/// What the state database remembers about a partition across restarts.
public struct PartitionStatusRow: Sendable, Hashable, Codable {
    public struct LastError: Sendable, Hashable, Codable {
        public var code: Int
        public var message: String
        /// Seconds since the epoch.
        public var at: Double
        public init(code: Int, message: String, at: Double) {
            self.code = code
            self.message = message
            self.at = at
        }
    }

    public var name: PartitionName
    /// Paused by `tetherctl pause`; stays paused across restarts until `tetherctl resume`.
    public var paused: Bool
    /// Stopped by an error that needs the configuration to change (105, 204).
    public var stoppedReason: String?
    public var lastError: LastError?

    public init(name: PartitionName, paused: Bool = false, stoppedReason: String? = nil, lastError: LastError? = nil) {
        self.name = name
        self.paused = paused
        self.stoppedReason = stoppedReason
        self.lastError = lastError
    }
}
