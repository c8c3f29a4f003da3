import Foundation
import TetherProtocol
@testable import TetherServer

/// The integration role of `base`, stopping, once ``pauseNextRegistration()`` was called, in the
/// next registration of a client file (``IntegrationStorage/registerClientFileWithEpoch(in:now:)``,
/// what a new device's bind calls; after it ran) until ``resume()``: a test can act in the gap
/// between a bind's storage work and the registration of its session.
final class PausingRegistration: IntegrationStorage, @unchecked Sendable {
    let base: any IntegrationStorage
    private let lock = NSLock()
    private var armed = false
    private let (reachedStream, reached) = AsyncStream<Void>.makeStream()
    private let (resumeStream, resumer) = AsyncStream<Void>.makeStream()

    init(_ base: any IntegrationStorage) { self.base = base }

    func pauseNextRegistration() { lock.withLock { armed = true } }

    /// Waits until a paused registration has run.
    func waitUntilPaused() async {
        var iterator = reachedStream.makeAsyncIterator()
        _ = await iterator.next()
    }

    func resume() { resumer.yield() }

    func registerClientFileWithEpoch(in partition: PartitionName, now: Date) async throws -> (ClientFileIdentity, PartitionHead, epoch: Int64) {
        let result = try await base.registerClientFileWithEpoch(in: partition, now: now)
        let pause = lock.withLock { () -> Bool in
            defer { armed = false }
            return armed
        }
        if pause {
            reached.yield()
            var iterator = resumeStream.makeAsyncIterator()
            _ = await iterator.next()
        }
        return result
    }

    // The rest of the role is forwarded.
    func registerClientFile(in partition: PartitionName, now: Date) async throws -> (ClientFileIdentity, PartitionHead) {
        try await base.registerClientFile(in: partition, now: now)
    }
    func clientFile(_ id: Int64, of partition: PartitionName) async throws -> ClientFileRecord? {
        try await base.clientFile(id, of: partition)
    }
    func touchClientFile(_ id: Int64, of partition: PartitionName, now: Date, confirmedVersion: Int64) async throws {
        try await base.touchClientFile(id, of: partition, now: now, confirmedVersion: confirmedVersion)
    }
    func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, uploadSalt: Int64, into partition: PartitionName, now: Date,
        scope: WriteScope
    ) async throws -> IntegrationOutcome {
        try await base.integrate(uploads, from: clientFile, uploadSalt: uploadSalt, into: partition, now: now, scope: scope)
    }
    func integrate(
        _ uploads: [UploadChangeset], from clientFile: Int64, uploadSalt: Int64, into partition: PartitionName, now: Date, epoch: Int64,
        scope: WriteScope
    ) async throws -> IntegrationOutcome {
        try await base.integrate(uploads, from: clientFile, uploadSalt: uploadSalt, into: partition, now: now, epoch: epoch, scope: scope)
    }
    func appliedScopes(of clientFile: Int64) async throws -> AppliedScopes? { try await base.appliedScopes(of: clientFile) }
    func recordAppliedScope(_ scope: AppliedScope, initial: Bool, of clientFile: Int64) async throws {
        try await base.recordAppliedScope(scope, initial: initial, of: clientFile)
    }
}
