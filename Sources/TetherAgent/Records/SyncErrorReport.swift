import TetherProtocol

/// One sync error the agent met, as the error hook and the event stream see it: a session
/// error of a partition, a connection-level error, or a transport failure (no code).
package struct SyncErrorReport: Sendable, Hashable {
    /// Empty for a connection-level error or a transport failure.
    package var partition: String
    /// The partition's store; empty with the partition.
    package var store: String
    /// nil for a transport failure (refused, timed out, closed without an error).
    package var code: Int?
    /// The code's snake_case name, or the kind of transport failure (`connection_refused`, …).
    package var name: String
    package var message: String
    /// `retry`, `reauth`, `client_reset`, `client_reset_no_recovery`, `delete_store`, `fatal`
    /// or `transient` (a transport failure).
    package var action: String
    /// The reset this error started, if it started one.
    package var resetID: String?
    /// For a 209 or 210: whether the store regressed or is synced from two places.
    package var cause: LineageCause?
    /// For a 231 (a compensating write): the row reverted and why (the hook's `TETHER_TABLE`,
    /// `TETHER_KEY`, `TETHER_REASON`).
    package var compensation: Compensation?

    package struct Compensation: Sendable, Hashable {
        package var table: String
        package var key: String
        package var reason: String

        package init(table: String, key: String, reason: String) {
            self.table = table
            self.key = key
            self.reason = reason
        }
    }

    package init(partition: String, store: String, code: Int?, name: String, message: String, action: String, resetID: String? = nil) {
        self.partition = partition
        self.store = store
        self.code = code
        self.name = name
        self.message = message
        self.action = action
        self.resetID = resetID
    }

    /// A session or connection-level error the server sent.
    package init(_ error: SyncError, partition: String, store: String, resetID: String? = nil) {
        self.init(
            partition: partition, store: store, code: error.code.rawValue, name: error.code.name, message: error.message,
            action: error.action.rawValue, resetID: resetID)
        cause = LineageCause(error)
    }

    /// Identical errors are folded by this: the code, or the kind of transport failure.
    package var foldingKey: String { code.map(String.init) ?? name }
}
