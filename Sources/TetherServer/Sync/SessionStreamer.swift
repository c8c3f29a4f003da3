import Logging
import NIOCore
import Synchronization
import TetherProtocol

/// Sends one bound session what it needs: the partition's state in chunks (new store or
/// reset), then history entries after its version, batched, whenever the partition gets
/// a new version. The store's own changesets go back without changes, as acknowledgements.
///
/// It holds no task while the session is idle: the state goes out in one job of the
/// ``SyncWorkQueue``, then each wake-up of its ``DownloadWakeup`` submits a job that sends
/// what is new and ends (one at a time; a wake-up meanwhile makes it run once more).
struct SessionStreamer: Sendable {
    let session: BoundSession
    let generation: UInt64
    let bootstrap: Bool
    /// With `bootstrap`: the ready file to send in place of rows.
    let file: ReadyFileHandle?
    let after: ServerVersion
    let wakeups: DownloadWakeup
    /// Flow control: one unit per state or download message.
    let window: SendWindow
    let connection: ServerConnection
    /// The four reads it makes: the state, the history after the cursor (fenced by the
    /// session's epoch), the head, and the integrated seq to resume acknowledgements from.
    let storage: any HistoryReading
    let policy: ServerPolicy
    /// Turns a storage's fence into the session's rebind.
    let fence: RebindFence
    let writer: SyncChannelWriter
    let queue: SyncWorkQueue
    let logger: Logger

    static let maxEntriesPerBatch = 512

    var id: SessionID { session.key.session }

    /// Starts the session's downloads (its state first when it bootstraps).
    func start() {
        queue.submit { await begin() }
    }

    /// Where the session's downloads stand between wake-ups: the last version sent and the
    /// store's last integrated seq. Touched by one job at a time (``DownloadWakeup``).
    private final class Position: Sendable {
        private let value: Mutex<(cursor: Int64, integrated: Int64)>
        init(cursor: Int64, integrated: Int64) { value = Mutex((cursor, integrated)) }
        var current: (cursor: Int64, integrated: Int64) {
            get { value.withLock { $0 } }
            set { value.withLock { $0 = newValue } }
        }
    }

    private func begin() async {
        do {
            var cursor = after
            if bootstrap {
                let sent = if let file { try await streamFile(file) } else { try await streamState() }
                guard let sent else { return }
                cursor = sent
            }
            // A bootstrapping session's client file was registered by its bind and could upload
            // only once the last state chunk was sent, after `start` was read: nothing of it is
            // integrated at or before `start`. One storage round trip less per new device.
            var integrated = bootstrap ? 0 : try await storage.integratedSeq(
                of: session.clientFile, in: session.partition, atOrBefore: cursor.version)
            if !bootstrap, let change = session.subscriptionChange {
                guard let changed = try await changeSubscriptions(change, after: cursor.version, integrated: integrated) else { return }
                (cursor, integrated) = (ServerVersion(version: changed.cursor, salt: 0), changed.integrated)
            }
            let position = Position(cursor: cursor.version, integrated: integrated)
            wakeups.attach { [self] in queue.submit { await catchUp(position) } }
        } catch {
            await ended(by: error)
        }
    }

    /// Sends what is new since `position`, again while wake-ups came meanwhile.
    private func catchUp(_ position: Position) async {
        do {
            repeat {
                let (cursor, integrated) = position.current
                guard let next = try await sendNewEntries(after: cursor, integrated: integrated, scope: session.scope) else {
                    wakeups.finish()
                    return
                }
                position.current = next
            } while wakeups.ranOnce()
        } catch {
            wakeups.finish()
            await ended(by: error)
        }
    }

    /// A failure ends the session (not the connection) unless the session ended already.
    private func ended(by error: any Error) async {
        switch error {
        case is CancellationError, is SyncChannelWriter.WriteFailed:
            return  // the connection is gone: its close releases the session
        case StorageError.fenced(let what):
            guard await connection.isCurrent(id, generation: generation) else { return }
            await connection.fail(id, generation: generation, with: fence.fenced(what))
        default:
            guard await connection.isCurrent(id, generation: generation) else { return }
            logger.error("download stream failed", metadata: ["partition": "\(session.partition)", "error": "\(error)"])
            await connection.fail(id, generation: generation, with: SyncService.storageFailure(error))
        }
    }

    /// Sends the whole state; returns the version it represents, nil when the session ended.
    private func streamState() async throws -> ServerVersion? {
        // A partition at version 0 has no rows (every row comes with a version): a new device
        // of a partition nobody has written yet — a rollout, per-device partitions — gets its
        // empty state without reading it, which on PostgreSQL is five of its round trips (a snapshot's
        // BEGIN, the head, the totals, the first rows, COMMIT). A version committed since the
        // bind read `after` reaches the device as history after it.
        let reader: any StateReader =
            if after.version == 0 {
                EmptyStateReader(version: after)
            } else if session.scope.isWhole {
                try await storage.openState(of: session.partition)
            } else {
                // The rows the filter index finds for the scope (or the subscribed tables whole).
                try await storage.openState(of: session.partition, holdable: [session.scope])
            }
        let schema = await policy.snapshot.schemas.current
        do {
            // With subscriptions, the rows the scope holds; progress counts the rows read.
            var progress = DownloadProgress(rowsDone: 0, rowsTotal: reader.totalRows, bytesDone: 0, bytesTotal: reader.totalBytes)
            while true {
                let read = try await reader.nextStored(maxRows: StoredStateRow.maxRowsPerChunk, maxBytes: ProtocolLimits.targetBatchBytes)
                // Rows of a table read through an exact plan all match: not evaluated again.
                let stored = try Self.held(read, by: session.scope, exactly: reader.exactTables)
                let rows = try StoredStateRow.stateRows(stored, schema)
                progress.rowsDone += Int64(read.count)
                progress.bytesDone = min(progress.bytesTotal, progress.bytesDone + read.reduce(0) { $0 + Int64($1.key.count + $1.fields.count) })
                let isLast = read.isEmpty || progress.rowsDone >= progress.rowsTotal
                if isLast { progress.bytesDone = progress.bytesTotal }
                if rows.isEmpty && !isLast { continue }  // nothing held among these rows
                if let delay = ServerFaultInjection.stateChunkDelay { try await Task.sleep(for: delay) }
                if progress.rowsDone > Int64(rows.count) { await ServerFaultInjection.holdStateIfRequested() }  // not the first chunk
                guard await window.take(), await connection.sendingStateChunk(id, generation: generation, isLast: isLast) else {
                    await reader.close()
                    return nil
                }
                let chunk = StateChunk(session: id, serverVersion: reader.version, progress: progress, isLast: isLast, rows: rows)
                let bytes = ServerMessage.state(chunk).encoded()
                try await writer.writeBinaryMessage(ByteBuffer(bytes: bytes))
                connection.service.metrics.sent(bytes: bytes.count)
                if isLast { break }
            }
            await reader.close()
            return reader.version
        } catch {
            await reader.close()
            throw error
        }
    }

    /// Sends the ready file from where the device's download starts, in slices under the
    /// session's window; returns the version it holds, nil when the session ended.
    private func streamFile(_ handle: ReadyFileHandle) async throws -> ServerVersion? {
        let file = handle.file
        var offset = handle.startOffset
        var first = true
        while true {
            let (encoding, count) = handle.slice(at: offset)
            let slice = StateFileSlice(fileSize: file.size, offset: offset, digest: file.digest, encoding: encoding, bytes: [])
            let end = offset + Int64(slice.encoding == .raw ? count : slice.fileBytes)
            let isLast = end == file.size
            if let delay = ServerFaultInjection.stateChunkDelay { try await Task.sleep(for: delay) }
            if !first { await ServerFaultInjection.holdStateIfRequested() }
            first = false
            guard await window.take(), await connection.sendingStateChunk(id, generation: generation, isLast: isLast) else { return nil }
            let progress = DownloadProgress(
                rowsDone: isLast ? file.rows : file.rows * end / max(file.size, 1), rowsTotal: file.rows,
                bytesDone: end, bytesTotal: file.size)
            // The head only: the bytes are read into the send buffer after it.
            let chunk = StateChunk(session: id, serverVersion: file.version, progress: progress, isLast: isLast, content: .file(slice))
            let head = ServerMessage.encodedStateFileHead(chunk, slice: slice, count: count)
            var buffer = ByteBuffer()
            buffer.reserveCapacity(head.count + count)
            buffer.writeBytes(head)
            try handle.read(at: offset, encoding: encoding, count: count, into: &buffer)
            let sent = buffer.readableBytes
            try await writer.writeBinaryMessage(buffer)
            connection.service.metrics.sent(bytes: sent)
            offset = end
            if isLast { return file.version }
        }
    }

    /// Sends every history entry after `cursor` (up to `last` when given) in batches, as
    /// `scope` sees them; returns the new cursor and integrated seq, nil when the session ended.
    func sendNewEntries(
        after start: Int64, integrated seq: Int64, scope: SubscriptionScope, upTo last: Int64? = nil
    ) async throws -> (cursor: Int64, integrated: Int64)? {
        var cursor = start
        var integrated = seq
        while last.map({ cursor < $0 }) ?? true {
            await ServerFaultInjection.holdDownloadsIfRequested()
            var entries = try await storage.history(
                of: session.partition, after: cursor, maxEntries: Self.maxEntriesPerBatch, maxBytes: ProtocolLimits.targetBatchBytes,
                epoch: session.epoch)
            if let last { entries.removeAll { $0.version.version > last } }
            guard let newest = entries.last else { break }
            let latest = try await storage.head(of: session.partition)?.latest.version ?? newest.version.version
            var batch: [EncodedDownloadEntry] = []
            var notices: [CompensatingWrites] = []
            for entry in entries {
                if entry.originFile == session.clientFile {
                    integrated = max(integrated, entry.originSeq)
                    // The store's own changes come back as the acknowledgement: empty, or the
                    // reverts of its compensating writes, announced just before.
                    var reverts = EncodedDownloadEntry.emptyChangeset
                    if let record = try Self.compensation(of: entry) {
                        if session.hearsCompensatingWrites { notices.append(CompensatingWrites(
                            session: id, serverVersion: entry.version, writes: Array(record.writes.prefix(CompensatingWrites.maxWrites)))) }
                        reverts = record.reverts.encoded
                    }
                    batch.append(EncodedDownloadEntry(serverVersion: entry.version, integratedClientSeq: integrated, changeset: reverts))
                } else {
                    // Each entry's changeset goes out as stored when the session holds the whole
                    // partition: no decode and encode per session.
                    batch.append(EncodedDownloadEntry(
                        serverVersion: entry.version, integratedClientSeq: integrated, changeset: try Self.changes(of: entry, seenBy: scope)))
                }
            }
            for notice in notices {
                guard await connection.isCurrent(id, generation: generation) else { return nil }
                try await writer.writeBinaryMessage(ByteBuffer(bytes: ServerMessage.compensatingWrites(notice).encoded()))
            }
            guard await window.take(), await connection.isCurrent(id, generation: generation) else { return nil }
            let bytes = ServerMessage.encodedDownload(session: id, latestServerVersion: max(latest, newest.version.version), entries: batch)
            try await writer.writeBinaryMessage(ByteBuffer(bytes: bytes))
            connection.service.metrics.sent(bytes: bytes.count)
            cursor = newest.version.version
        }
        return (cursor, integrated)
    }
}

/// The state of a partition at version 0, which holds no rows: read without the storage.
private struct EmptyStateReader: StateReader {
    let version: ServerVersion
    var totalRows: Int64 { 0 }
    var totalBytes: Int64 { 0 }
    func nextStored(maxRows: Int, maxBytes: Int) async throws -> [StoredStateRow] { [] }
    func close() async {}
}
