import TetherProtocol

/// What the state database remembers about a partition across restarts.
package struct PartitionStatusRow: Sendable, Hashable, Codable {
    package struct LastError: Sendable, Hashable, Codable {
        package var code: Int
        package var message: String
        /// Seconds since the epoch.
        package var at: Double
        package init(code: Int, message: String, at: Double) {
            self.code = code
            self.message = message
            self.at = at
        }
    }

    package var name: PartitionName
    /// Paused by `tetherctl pause`; stays paused across restarts until `tetherctl resume`.
    package var paused: Bool
    /// Stopped by an error that needs the configuration to change (105, 204).
    package var stoppedReason: String?
    package var lastError: LastError?

    package init(name: PartitionName, paused: Bool = false, stoppedReason: String? = nil, lastError: LastError? = nil) {
        self.name = name
        self.paused = paused
        self.stoppedReason = stoppedReason
        self.lastError = lastError
    }
}
