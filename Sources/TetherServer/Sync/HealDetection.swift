import Synchronization
import Foundation
import TetherProtocol

/// What the server does when a device binds at a version its history does not hold (211) or
/// with an identity it does not know (208): evidence that the storage went back in time.
/// Pure; ``SyncService`` performs the verdict (docs/client-reset.md, "Healing a restored server").
///
/// Only a version **past where the history ended when this process started** opens a heal by
/// itself, and only when the history does not hold it with the device's salt: this process did
/// not issue it, so the database was put back without the server being told — whether the
/// version is past the head or inside what this process appended since (the first device to
/// reconnect may be one that was behind, whose uploads move the head past the others before
/// they bind). A version at or before that end with another salt is also what every restore
/// leaves behind (the devices of a rollback come back for days), so it only raises the known
/// end of a window already open.
package enum HealDetection {
    package enum Verdict: Sendable, Hashable {
        case nothing
        /// Open a heal record: the window is (`restoredTo`, `lostUntil`].
        case open(LostWindow)
        /// The open record's window ends later than known: raise its end to the version.
        case raise(Int64)
    }

    /// - Parameters:
    ///   - reported: the version the binding store says it synced.
    ///   - inHistory: whether the history holds that version with the store's salt (then the
    ///     store is on the current line, and bound with an identity the server does not know).
    ///   - head: the partition's head now.
    ///   - record: the partition's heal record, if any.
    ///   - lostByRecord: whether that record lists the reported version, with the store's salt,
    ///     among the versions its restore lost (`heal_window`).
    ///   - lostByARestore: whether any restore of this database lost the reported version with
    ///     the store's salt (`restored_away`): the current record's, or an earlier one a later
    ///     restore replaced, or one whose heal was closed. A salt is drawn per issued version, so
    ///     such a store holds a line of history that restore ended, whatever came after it: it
    ///     is a leftover — a device away through several restores — never evidence of a
    ///     database put back behind the server's back, and never opens or widens a window.
    ///   - headAtStart: the partition's latest version when this process started (nil when it
    ///     did not exist then): a database put back while the server was stopped ended there,
    ///     and what this process added since is post-restore history.
    ///   - startedAt: when this process started: a record opened before it belongs to an
    ///     earlier life of the server (and perhaps an earlier database).
    ///   - clientFileLastSeen: when the store's client file last bound, as this database
    ///     remembers it — also one `terminateSync` forgot since (nil when it never knew the
    ///     client file). A store that bound to this database's history after the record opened
    ///     was on the line written since that restore: a version of it the history lacks now
    ///     was lost again — the database was put back once more — and is neither part of that
    ///     record's window nor its leftover.
    package static func verdict(
        reported: Int64, inHistory: Bool, head: PartitionHead, record: HealRecord?, lostByRecord: Bool = false,
        lostByARestore: Bool = false, headAtStart: Int64?, startedAt: Date, clientFileLastSeen: Date? = nil
    ) -> Verdict {
        guard !inHistory else { return .nothing }
        // An earlier restore's leftover (the current record's own are weighed below, as before).
        guard !lostByARestore || lostByRecord else { return .nothing }
        let boundSinceRecord = record.flatMap { record in clientFileLastSeen.map { $0 > record.openedAt } } ?? false
        if let record, record.closedAt == nil, !record.windowKnown, !boundSinceRecord, reported > record.lostUntil,
            reported > record.restoredTo
        {
            return .raise(reported)
        }
        let historyEndAtStart = min(headAtStart ?? head.latest.version, head.latest.version)
        guard reported > historyEndAtStart else { return .nothing }
        if let record {
            // The window of a restore this server life already knows of: nothing new.
            guard record.openedAt < startedAt else { return .nothing }
            // Up to what an earlier restore lost: a device that has not reset since it (a
            // rollback's devices come back for days). But the same numbers are issued again,
            // with new salts, on the line written since: when the record knows the lost salts,
            // only a version it lists with the store's salt is such a leftover.
            if reported <= record.lostUntil, !boundSinceRecord, !record.windowKnown || lostByRecord { return .nothing }
        }
        return .open(LostWindow(restoredTo: historyEndAtStart, lostUntil: reported, salts: [:]))
    }
}

/// Every partition's latest version when the process started (``HealDetection``), moved to
/// the restored head when a restore rewrites a partition's history while the process runs (on
/// this instance or another sharing its database): versions the history held before it are
/// then the restore's to account for, not evidence of a database put back.
package final class HeadsAtStart: Sendable {
    private let state = Mutex<(versions: [String: Int64], at: Date)>(([:], Date()))

    package init() {}

    package func record(_ versions: [String: Int64], at date: Date = Date()) {
        state.withLock { $0 = (versions, date) }
    }

    /// `partition` was restored in this process's life; its history now ends at `version`.
    package func restored(_ partition: PartitionName, to version: Int64) {
        state.withLock { $0.versions[partition.rawValue] = version }
    }

    package func version(of partition: PartitionName) -> Int64? { state.withLock { $0.versions[partition.rawValue] } }
    package var startedAt: Date { state.withLock { $0.at } }
}
