/// One part of a device's contribution to healing a restored partition (protocol 4,
/// docs/protocol.md "`07` heal"; docs/client-reset.md "Healing a restored server").
///
/// A device whose store synced to ``view`` inside the window a server restore lost tells the
/// server, during its client reset, how its synced rows (its store without its unsynced
/// changes) differ from the server's state at ``base`` — the state it has just downloaded.
/// The server puts that view back *before* every write made since the restore, unless a
/// newer view already did (docs/client-reset.md has the rules).
///
/// A contribution is sent in order as chunks of one session, each answered by a
/// ``HealReply`` before the next goes. The first chunk carries no rows and no unknown keys:
/// it is the offer, which the server answers `accepted` (send the rest) or `notWanted`.
/// Every chunk is applied in its own transaction and may be sent again (after a cut, a crash
/// of either side): applying a view's rows twice changes nothing.
package struct HealChunk: Sendable, Hashable {
    package var session: SessionID
    /// The contribution's id: the same for every chunk and for every re-send (the agent uses
    /// its reset id), so the server recognises its own earlier chunks.
    package var contribution: UInt64
    /// The server version and salt the device's store had synced to (its view).
    package var view: ServerVersion
    /// The server version of the state the rows were compared with (the reset's download).
    package var base: Int64
    /// The last chunk: after it the view vouches for every row it did not list as unknown.
    package var isFinal: Bool
    /// Deletes naming rows whose synced value the device does not know (rows with unsynced
    /// changes: the store keeps their local value only). Their heal is left to other views.
    package var unknown: ChangeRows
    /// The view's rows that differ from the state at ``base``: an `insert` carrying every
    /// column for a row the view holds, a `delete` for a row it does not.
    package var rows: ChangeRows

    package init(
        session: SessionID, contribution: UInt64, view: ServerVersion, base: Int64, isFinal: Bool,
        unknown: ChangeRows, rows: ChangeRows
    ) {
        self.session = session
        self.contribution = contribution
        self.view = view
        self.base = base
        self.isFinal = isFinal
        self.unknown = unknown
        self.rows = rows
    }

    /// The offer that opens a contribution: no rows, not final.
    package static func offer(session: SessionID, contribution: UInt64, view: ServerVersion, base: Int64) -> HealChunk {
        HealChunk(
            session: session, contribution: contribution, view: view, base: base, isFinal: false,
            unknown: ChangeRows(Changeset()), rows: ChangeRows(Changeset()))
    }
}

/// The server's answer to one ``HealChunk`` (protocol 4, `88` healed).
package struct HealReply: Sendable, Hashable {
    package enum Outcome: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The chunk was applied (or the offer taken): send the next one.
        case accepted = 0
        /// The final chunk was applied: the contribution is complete.
        case completed = 1
        /// Nothing of this view is wanted, and no heal is open for the partition (none, a
        /// rollback, closed) or the view is not in the lost window. The device resets as it
        /// would without healing.
        case notWanted = 2
        /// Another device's view was healed after ``HealChunk/base``: the rows were compared
        /// with a state that is no longer the server's. Download the state again and send the
        /// contribution again (same id).
        case rebase = 3
        /// A heal is open, but this view adds nothing: newer views cover it, or it is of the
        /// history written since the restore. The device resets without contributing, and its
        /// recovery keeps unsynced updates and deletes of rows the server lacks, which another
        /// device's view may still bring back.
        case covered = 4

        package var description: String {
            switch self {
            case .accepted: "accepted"
            case .completed: "completed"
            case .notWanted: "not-wanted"
            case .rebase: "rebase"
            case .covered: "covered"
            }
        }
    }

    package var session: SessionID
    package var contribution: UInt64
    package var outcome: Outcome
    /// Rows this contribution changed on the server so far (all its chunks, re-sends counted once).
    package var healedChanges: Int64
    /// Why, for `notWanted`, `covered` and `rebase` (for logs; never row contents).
    package var reason: String

    package init(session: SessionID, contribution: UInt64, outcome: Outcome, healedChanges: Int64, reason: String = "") {
        self.session = session
        self.contribution = contribution
        self.outcome = outcome
        self.healedChanges = healedChanges
        self.reason = reason
    }
}
