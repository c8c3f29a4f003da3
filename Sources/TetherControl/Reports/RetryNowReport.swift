/// The result of `retry-now`: what was waiting out a backoff and now tries again. Neither a
/// connection that is up nor a partition that syncs (or is paused, or waits for an operator)
/// is touched: there is nothing to retry.
public struct RetryNowReport: Sendable, Hashable, Codable {
    /// The connection to the server was backing off (or stopped by a fatal error, which waits
    /// for a reload: that is left alone and `false`), and reconnects now.
    public var connection: Bool
    /// The partitions that were backing off before binding again, and bind now.
    public var partitions: [String]

    public init(connection: Bool, partitions: [String]) {
        self.connection = connection
        self.partitions = partitions
    }
}
