/// A change a device made that the server did not integrate (error 231, `compensating_write`):
/// the row is outside the device's subscriptions, or the write breaks its grant's write rule.
/// The server reverts it: the entry that acknowledges the upload carries the server's version
/// of the row (or its removal), and this notice says which row and why. Never row values.
package struct CompensatingWrite: Sendable, Hashable {
    package enum Reason: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The row, before or after the change, is outside the partition's subscriptions.
        case outsideSubscriptions = 1
        /// The change breaks the grant's write rule for the table.
        case writeRule = 2
        /// The change sets a column the grant makes read-only.
        case readOnlyColumn = 3

        /// The word logs, events and hooks carry (`TETHER_REASON`).
        package var description: String {
            switch self {
            case .outsideSubscriptions: "outside_subscriptions"
            case .writeRule: "write_rule"
            case .readOnlyColumn: "read_only_column"
            }
        }
    }

    package var table: String
    package var key: RowKey
    package var reason: Reason
    /// One sentence for the operator (names the table and columns, never values).
    package var message: String

    package init(table: String, key: RowKey, reason: Reason, message: String) {
        self.table = table
        self.key = key
        self.reason = reason
        self.message = message
    }
}

/// The compensating writes of one integrated upload (server → client, protocol 9), sent just
/// before the download entry at ``serverVersion`` that acknowledges the upload and carries the
/// reverts. A device records them once (a re-sent notice for a version it already applied is
/// ignored).
package struct CompensatingWrites: Sendable, Hashable {
    package var session: SessionID
    package var serverVersion: ServerVersion
    package var writes: [CompensatingWrite]

    package init(session: SessionID, serverVersion: ServerVersion, writes: [CompensatingWrite]) {
        self.session = session
        self.serverVersion = serverVersion
        self.writes = writes
    }

    /// At most this many notices in one message; the rest of an upload's are counted in
    /// ``CompensatingWrites/omitted`` by the server's log (reverts are always all sent).
    package static let maxWrites = 1_000
}
