import Logging
import TetherProtocol
import TetherStore

/// What `tetherctl status` (and `wait-synced`) shows from a store: its server version and its
/// unsynced changes, read from the open store or, when the agent has none open, from its file.
struct StoreCounts: Sendable, Equatable {
    let serverVersion: Int64
    let unsyncedChanges: Int

    /// Reads the open store's counts; clears the reset-cycle marker once the server has
    /// acknowledged everything a reset recovered.
    static func read(_ store: PartitionStore, log: Logger) async throws -> StoreCounts {
        let metadata = try await store.metadata()
        let pending = try await store.pendingChangeCount()
        if pending == 0, metadata.clientResetMarker != nil {
            try await store.setClientResetMarker(nil)
            log.notice("the server acknowledged the changes recovered by reset \(metadata.clientResetMarker ?? "")")
        }
        return StoreCounts(serverVersion: metadata.serverVersion.version, unsyncedChanges: pending)
    }

    /// Reads the counts of the store file at `path` without opening it as the agent does; nil
    /// when there is no store yet, or one never synced.
    static func read(fileAt path: String) throws -> StoreCounts? {
        guard let read = try PartitionStore.syncFigures(ofStoreAt: path) else { return nil }
        return StoreCounts(serverVersion: read.metadata.serverVersion.version, unsyncedChanges: read.pending)
    }

    /// ``read(fileAt:)`` for the status of a partition without a session: nil when there is
    /// nothing to show (no store yet, one never synced) or the file cannot be read now (the
    /// status then shows the last counts; the journal says why).
    static func readShown(fileAt path: String, log: Logger) -> StoreCounts? {
        do {
            return try read(fileAt: path)
        } catch {
            log.warning("cannot read the version and unsynced count of the store \(path); the status shows the last ones: \(error)")
            return nil
        }
    }

    /// Shows them in `figures`.
    func show(in figures: inout PartitionStatus) {
        figures.serverVersion = serverVersion
        figures.unsyncedChanges = unsyncedChanges
    }
}
