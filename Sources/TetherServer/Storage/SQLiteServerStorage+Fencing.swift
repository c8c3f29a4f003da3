import Foundation
import TetherProtocol

/// Storage one process owns: the admin command that restores also ends the sessions in the
/// same process, so there is nothing to fence. Every partition's epoch is 0, the fenced reads
/// and writes are the plain ones, and state downloads are not bounded.
extension SQLiteServerStorage {
    package func epoch(of partition: PartitionName) async throws -> Int64 { 0 }

    package func registerClientFileWithEpoch(in partition: PartitionName, now: Date) async throws -> (
        ClientFileIdentity, PartitionHead, epoch: Int64
    ) {
        let (identity, head) = try await registerClientFile(in: partition, now: now)
        return (identity, head, 0)
    }

    package func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, uploadSalt: Int64, into partition: PartitionName, now: Date, epoch: Int64,
        scope: WriteScope
    ) async throws -> IntegrationOutcome {
        try await integrate(uploads, from: clientFile, uploadSalt: uploadSalt, into: partition, now: now, scope: scope)
    }

    package func history(
        of partition: PartitionName, after version: Int64, maxEntries: Int, maxBytes: Int, epoch: Int64
    ) async throws -> [HistoryEntry] {
        try await history(of: partition, after: version, maxEntries: maxEntries, maxBytes: maxBytes)
    }

    package var stateDownloads: (reading: Int, waiting: Int)? { nil }
}
