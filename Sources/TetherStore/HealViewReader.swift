import Foundation
import TetherProtocol

/// One part of a device's view for healing (docs/client-reset.md "Healing a restored server"):
/// the keys the view cannot vouch for, and the view's rows that differ from the fetched state.
package struct HealViewChunk: Sendable, Hashable {
    /// Deletes naming rows with unsynced changes (the store keeps only their local value).
    package var unknown: ChangeRows
    /// An insert carrying every column (nulls included) for a row of the view that the fetched
    /// state lacks or holds with another value; a delete for a row of the fetched state the
    /// view does not have.
    package var rows: ChangeRows

    /// Changes in the chunk, unknown keys included.
    package var count: Int { unknown.count + rows.count }
}

/// A device's **view** of a partition, read for healing a restored server: its store as a
/// reset's backup kept it, without its unsynced changes, compared with the server state the
/// reset fetched into its staging store. The view is what the server had at ``view`` as far
/// as this device saw it; healing gives it back to a server that lost it.
///
/// The view cannot vouch for rows the backup's change log names (any entry) or whose values
/// ``HeldValues`` kept: the log names rows, not values, so their synced value is gone. Those
/// are sent as unknown keys, never as rows — except, for a device that replays its unsynced
/// changes (``recovering``), a row whose first unsynced change is an update and that the
/// store still holds: it existed at ``view`` and is sent with its current values, the synced
/// ones with the device's own changes on top. Those changes reach the server after the reset
/// as changes made since the restore, which win over a healed value field by field anyway;
/// so the row's window values are not lost when every device that held it had changed it
/// (soak seed 961973229). Such a row is left out when only updates changed it and the fetched
/// state holds it with the same values in every column they did not change: the view adds
/// nothing there that the replay does not write anyway.
///
/// Both files are only read (opened read-only, the staging store attached to the backup's
/// connection). ``chunks()`` reads the difference a page of SQL at a time per table, so
/// memory is bounded by a chunk whatever the stores' sizes. Use it only when
/// ``schemasMatch``: rows of different schemas cannot be compared column by column.
package struct HealViewReader: Sendable {
    /// At most this many changes (unknown keys and rows together) in a chunk.
    package static let maxChanges = 2000

    package let backupPath: String
    package let stagingPath: String
    /// The server version and salt the backup's store had synced to.
    package let view: ServerVersion
    /// The backup's recorded schema.
    package let schema: Schema
    /// Whether the backup's recorded schema equals the staging store's: when not, the view
    /// cannot be compared (the server's schema changed since) and healing is skipped.
    package let schemasMatch: Bool
    /// Whether the reset replays the device's unsynced changes: then rows it only updated are
    /// part of the view (see above); a reset that discards them sends them as unknown keys.
    package let recovering: Bool
    let maxChanges: Int
    let maxBytes: Int

    /// Reads both stores' metadata and schemas; fails when either file is not a Tether store.
    /// `maxChanges` and `maxBytes` bound each chunk (tests lower them).
    package init(
        backup: String, staging: String, recovering: Bool = false, maxChanges: Int = Self.maxChanges,
        maxBytes: Int = ProtocolLimits.targetBatchBytes
    ) throws(StoreError) {
        guard let metadata = try PartitionStore.metadata(ofStoreAt: backup, place: .backup),
            let backupSchema = try PartitionStore.recordedSchema(path: backup, place: .backup)
        else { throw .notAStore(path: backup) }
        guard let stagingSchema = try PartitionStore.recordedSchema(path: staging, place: .staging) else { throw .notAStore(path: staging) }
        backupPath = backup
        stagingPath = staging
        view = metadata.serverVersion
        schema = backupSchema
        schemasMatch = backupSchema == stagingSchema
        self.recovering = recovering
        self.maxChanges = max(1, min(maxChanges, Self.maxChanges))
        self.maxBytes = max(1, maxBytes)
    }

    /// The view's chunks, read from the start each time it is iterated (a contribution sent
    /// again reads them again).
    package func chunks() -> HealViewChunks { HealViewChunks(reader: self) }
}

/// The chunks of a ``HealViewReader``, as an asynchronous sequence: the unknown keys first,
/// then each table's differing rows and missing rows. Each iteration opens the files again.
package struct HealViewChunks: AsyncSequence, Sendable {
    package typealias Element = HealViewChunk
    package typealias Failure = StoreError

    let reader: HealViewReader

    package func makeAsyncIterator() -> HealViewCursor { HealViewCursor(reader: reader) }
}
