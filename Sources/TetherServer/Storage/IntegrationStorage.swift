import Foundation
import TetherProtocol

/// What a bind and an upload write: the client files (read, registered, touched) and the
/// integration of uploads into state and history. ``SyncService`` holds it.
package protocol IntegrationStorage: Sendable {
    func clientFile(_ id: Int64, of partition: PartitionName) async throws -> ClientFileRecord?
    /// Creates the partition when needed and a new client file with a fresh id and salt.
    func registerClientFile(in partition: PartitionName, now: Date) async throws -> (ClientFileIdentity, PartitionHead)
    /// ``registerClientFile(in:now:)`` and the partition's epoch (``HistoryReading/epoch(of:)``)
    /// as that registration found it: a new device's bind reads both in one transaction where
    /// the storage has epochs.
    func registerClientFileWithEpoch(in partition: PartitionName, now: Date) async throws -> (ClientFileIdentity, PartitionHead, epoch: Int64)
    /// Records that the store bound at `version`: last seen now, and its confirmed version
    /// raised to `version` (never lowered).
    func touchClientFile(_ id: Int64, of partition: PartitionName, now: Date, confirmedVersion: Int64) async throws
    /// In one transaction, per changeset in order: skips it when its `lastSeq` is at or below
    /// the client file's integrated seq (a re-send); applies it to the state in server order
    /// and appends it to the history with a fresh salt when its `afterSeq` is that seq;
    /// otherwise stops and reports the gap. Records the new integrated seq, and `uploadSalt`
    /// (the session's, ``StoreLineage``) as the salt it was integrated under, in the same
    /// transaction. A change `scope` (the session's subscriptions) does not allow is not applied
    /// but recorded with its version as a compensating write (``StateChangeApplier``).
    func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, uploadSalt: Int64, into partition: PartitionName, now: Date,
        scope: WriteScope
    ) async throws -> IntegrationOutcome
    /// ``integrate(_:from:uploadSalt:into:now:scope:)``, refused when the partition's epoch is no longer `epoch`.
    func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, uploadSalt: Int64, into partition: PartitionName, now: Date, epoch: Int64,
        scope: WriteScope
    ) async throws -> IntegrationOutcome
    /// The scopes the client file's store was last given (``AppliedScopes``); nil when none.
    func appliedScopes(of clientFile: Int64) async throws -> AppliedScopes?
    /// Records that the client file's store is being given `scope`: with its state (`initial`),
    /// or by a change, which becomes the latest of its ``AppliedScopes``, the one before kept
    /// (the store holds one or the other, and names it by its token).
    func recordAppliedScope(_ scope: AppliedScope, initial: Bool, of clientFile: Int64) async throws
}

/// Uploads without a session salt (tests and tools; an agent older than protocol 3), and of
/// sessions holding the whole partition.
extension IntegrationStorage {
    package func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, uploadSalt: Int64, into partition: PartitionName, now: Date
    ) async throws -> IntegrationOutcome {
        try await integrate(uploads, from: clientFile, uploadSalt: uploadSalt, into: partition, now: now, scope: .whole)
    }

    package func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, uploadSalt: Int64, into partition: PartitionName, now: Date, epoch: Int64
    ) async throws -> IntegrationOutcome {
        try await integrate(uploads, from: clientFile, uploadSalt: uploadSalt, into: partition, now: now, epoch: epoch, scope: .whole)
    }

    package func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, into partition: PartitionName, now: Date
    ) async throws -> IntegrationOutcome {
        try await integrate(uploads, from: clientFile, uploadSalt: 0, into: partition, now: now)
    }

    package func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, into partition: PartitionName, now: Date, epoch: Int64
    ) async throws -> IntegrationOutcome {
        try await integrate(uploads, from: clientFile, uploadSalt: 0, into: partition, now: now, epoch: epoch)
    }

    package func touchClientFile(_ id: Int64, of partition: PartitionName, now: Date) async throws {
        try await touchClientFile(id, of: partition, now: now, confirmedVersion: 0)
    }
}
