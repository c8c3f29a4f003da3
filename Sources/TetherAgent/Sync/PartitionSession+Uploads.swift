import TetherProtocol
import TetherStore

extension PartitionSession.Uploads {
    /// Log entries one upload batch holds at most; batches are cut by size first
    /// (`PartitionStore.uploadBatchBytes`, about 512 KiB of values): 4,096 short rows, or one row
    /// of a 1 MiB blob.
    static let batchEntries = 4096

    /// Sends every batch `store` holds after ``cursor`` on `link`, whole (docs/sync-model.md);
    /// `sent` after each one. What went through is kept when a batch fails.
    mutating func sendPending(
        from store: PartitionStore, on link: any LinkSession, sent: () -> Void, isolation: isolated (any Actor)? = #isolation
    ) async throws {
        while let batch = try await store.pendingChanges(after: cursor, limit: Self.batchEntries) {
            if batch.lastSeq > recordedThrough {
                // Recorded before it leaves, up to every seq assigned so far (their changes are
                // fixed): usually one durable write per burst of uploads.
                recordedThrough = try await store.recordUpload(
                    salt: salt, firstSeq: batch.afterSeq + 1, lastSeq: max(batch.lastSeq, try await store.lastAssignedSeq()))
            }
            try await link.upload([batch])
            cursor = batch.lastSeq
            sent()
        }
    }
}
