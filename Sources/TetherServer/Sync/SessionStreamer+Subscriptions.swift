import Logging
import NIOCore
import TetherProtocol

/// A session's downloads with subscriptions: the rows its scope holds, history entries as its
/// scope sees them, and a change of scope without a reset.
extension SessionStreamer {
    /// The rows of `stored` that `scope` holds (all of them for the whole partition, and those of
    /// the `exact` tables, read through an exact plan of the filter index).
    static func held(_ stored: [StoredStateRow], by scope: SubscriptionScope, exactly exact: Set<String> = []) throws(StorageError) -> [StoredStateRow] {
        guard !scope.isWhole else { return stored }
        do {
            return try stored.filter { try exact.contains($0.table) || scope.holds($0.table, storedKey: $0.key, storedFields: $0.fields) }
        } catch {
            throw .corrupt("state")
        }
    }

    /// An entry's changeset as `scope` sees it (``SubscriptionScope/filtered(_:images:)``): as
    /// stored for the whole partition.
    static func changes(of entry: HistoryEntry, seenBy scope: SubscriptionScope) throws -> [UInt8] {
        guard !scope.isWhole else { return entry.encodedChangeset }
        let images: RowImages?
        do {
            images = try entry.images.map { try RowImages.decode($0) }
        } catch {
            throw StorageError.corrupt("history row images")
        }
        let changes = try scope.filtered(try entry.decodedChangeset(), images: images)
        return changes.encoded
    }

    /// The entry's compensation record, when its upload had compensating writes.
    static func compensation(of entry: HistoryEntry) throws(StorageError) -> CompensationRecord? {
        guard let bytes = entry.compensations else { return nil }
        do { return try CompensationRecord.decode(bytes) } catch { throw .corrupt("history compensations") }
    }

    /// Changes the store's rows from `change.held`'s to the session's scope: catches the store up
    /// under the held scope to the version of a consistent state read, then sends the rows that
    /// enter (whole) and leave (keys) at that version in ``SubscriptionChunk``s, the last one
    /// naming the new set. Returns the cursor and integrated seq after, nil when the session ended.
    func changeSubscriptions(
        _ change: SubscriptionChange, after start: Int64, integrated seq: Int64
    ) async throws -> (cursor: Int64, integrated: Int64)? {
        // The rows entering and leaving are among those read (only they, where the index can tell).
        let reader = try await storage.openState(of: session.partition, changingFrom: change.held, to: session.scope)
        do {
            guard let caughtUp = try await sendNewEntries(after: start, integrated: seq, scope: change.held, upTo: reader.version.version) else {
                await reader.close()
                return nil
            }
            let scope = session.scope
            var pending: [RowChange] = []
            var bytes = 0
            var entered = 0, left = 0
            while true {
                let stored = try await reader.nextStored(maxRows: StoredStateRow.maxRowsPerChunk, maxBytes: ProtocolLimits.targetBatchBytes)
                for row in stored {
                    // Only the columns the filters name are read, and the whole row only for one entering.
                    let held: Bool, wanted: Bool
                    do {
                        held = try change.held.holds(row.table, storedKey: row.key, storedFields: row.fields)
                        wanted = try scope.holds(row.table, storedKey: row.key, storedFields: row.fields)
                    } catch {
                        throw StorageError.corrupt("state")
                    }
                    switch (held, wanted) {
                    case (false, true):
                        pending.append(try row.change())
                        bytes += row.key.count + row.fields.count
                        entered += 1
                    case (true, false):
                        let key: RowKey
                        do { key = try RowKey.decode(row.key) } catch { throw StorageError.corrupt("state") }
                        pending.append(.delete(row.table, key))
                        bytes += row.key.count
                        left += 1
                    default:
                        continue
                    }
                }
                let isLast = stored.isEmpty
                if isLast || pending.count >= StoredStateRow.maxRowsPerChunk || bytes >= ProtocolLimits.targetBatchBytes {
                    guard await window.take(), await connection.isCurrent(id, generation: generation) else {
                        await reader.close()
                        return nil
                    }
                    let chunk = SubscriptionChunk(
                        session: id, serverVersion: reader.version, setDigest: change.digest, scopeToken: change.token, isLast: isLast,
                        changes: ChangeRows(Changeset(pending)))
                    let message = ServerMessage.subscriptionChunk(chunk).encoded()
                    try await writer.writeBinaryMessage(ByteBuffer(bytes: message))
                    connection.service.metrics.sent(bytes: message.count)
                    pending.removeAll(keepingCapacity: true)
                    bytes = 0
                }
                if isLast { break }
            }
            await reader.close()
            logger.info("subscriptions changed", metadata: [
                "partition": "\(session.partition)", "version": "\(reader.version.version)", "rows_entered": "\(entered)", "rows_left": "\(left)",
            ])
            return (reader.version.version, caughtUp.integrated)
        } catch {
            await reader.close()
            throw error
        }
    }
}
