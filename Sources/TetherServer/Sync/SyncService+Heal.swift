import Logging
import TetherProtocol

extension SyncService {
    /// The answer a heal chunk gets without reaching the storage: the session may not write.
    static let readOnlyHealReason = "the partition is read-only for this user"

    /// Checks and applies one chunk of a device's heal contribution (protocol 4,
    /// docs/protocol.md "`07` heal"), as ``integrate(_:for:)`` does an upload: the session must
    /// be allowed to write (else the chunk is not wanted: the device resets without healing),
    /// its rows must fit the schema (225), and what it heals is published like an upload's
    /// changes. Returns the answer to send, or the session error to end the session with.
    package func heal(_ chunk: HealChunk, for session: BoundSession) async -> Result<HealReply, SyncError> {
        guard session.access.canWrite else {
            metrics.healChunk(.notWanted)
            return .success(HealReply(
                session: chunk.session, contribution: chunk.contribution, outcome: .notWanted, healedChanges: 0,
                reason: Self.readOnlyHealReason))
        }
        // A device with subscriptions or write rules vouches only for what it may hold and write.
        var chunk = chunk
        if session.writeScope.checksWrites {
            let (rows, unknown) = session.writeScope.vouched(chunk.rows.changeset)
            chunk.rows = ChangeRows(rows)
            chunk.unknown = ChangeRows(Changeset(chunk.unknown.changeset.changes + unknown.changes))
        }
        let snapshot = await policy.snapshot
        for changes in [chunk.unknown, chunk.rows] {
            if let problem = snapshot.schemas.problem(upload: changes) {
                return .failure(BindRules.applyRecoveryPolicy(problem, recoveryEnabled: snapshot.recoveryEnabled))
            }
        }
        do {
            var reply = try await storage.heal.contributeHeal(chunk, into: session.partition, now: now(), epoch: session.epoch)
            // The storage answers for the chunk it was given; the session is this one's.
            reply.session = chunk.session
            metrics.healChunk(reply.outcome)
            // Only a chunk with rows can have written history; one whose rows were all covered
            // by newer views wakes the sessions for nothing, which costs them one empty read.
            if Self.mayHaveWritten(reply, rows: chunk.rows) {
                let head = try await storage.history.head(of: session.partition) ?? .empty
                await committed(session.partition, head: head.latest.version, wroteHistory: true, changes: Int64(chunk.rows.count))
            }
            // A contribution's end (completed, not wanted, rebase) once per device reset at
            // info; the chunks in between at debug.
            logger.log(level: reply.outcome == .accepted ? .debug : .info, "heal chunk answered", metadata: [
                "partition": "\(session.partition)", "contribution": "\(chunk.contribution)", "outcome": "\(reply.outcome)",
                "view": "\(chunk.view.version)", "base": "\(chunk.base)", "healed": "\(reply.healedChanges)", "reason": "\(reply.reason)",
            ])
            return .success(reply)
        } catch {
            return .failure(sessionError(error, of: session, in: "heal chunk", recoveryEnabled: snapshot.recoveryEnabled))
        }
    }

    /// Whether applying a chunk may have written a history entry: it carried rows, was
    /// applied, and its contribution has healed something.
    static func mayHaveWritten(_ reply: HealReply, rows: ChangeRows) -> Bool {
        !rows.isEmpty && reply.healedChanges > 0 && (reply.outcome == .accepted || reply.outcome == .completed)
    }
}
