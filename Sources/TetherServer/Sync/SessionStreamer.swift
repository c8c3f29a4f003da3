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
            let integrated = bootstrap ? 0 : try await storage.integratedSeq(
                of: session.clientFile, in: session.partition, atOrBefore: cursor.version)
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
                guard let next = try await sendNewEntries(after: cursor, integrated: integrated) else {
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
        let reader: any StateReader = after.version == 0 ? EmptyStateReader(version: after) : try await storage.openState(of: session.partition)
        let schema = await policy.snapshot.schemas.current
        do {
            var progress = DownloadProgress(rowsDone: 0, rowsTotal: reader.totalRows, bytesDone: 0, bytesTotal: reader.totalBytes)
            while true {
                let stored = try await reader.nextStored(maxRows: StoredStateRow.maxRowsPerChunk, maxBytes: ProtocolLimits.targetBatchBytes)
                let rows = try StoredStateRow.stateRows(stored, schema)
                progress.rowsDone += Int64(rows.count)
                progress.bytesDone = min(progress.bytesTotal, progress.bytesDone + Int64(rows.byteCount))
                let isLast = rows.isEmpty || progress.rowsDone >= progress.rowsTotal
                if isLast { progress.bytesDone = progress.bytesTotal }
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

    /// Sends every history entry after `cursor` in batches; returns the new cursor and
    /// integrated seq, nil when the session ended.
    private func sendNewEntries(after start: Int64, integrated seq: Int64) async throws -> (cursor: Int64, integrated: Int64)? {
        var cursor = start
        var integrated = seq
        while true {
            await ServerFaultInjection.holdDownloadsIfRequested()
            let entries = try await storage.history(
                of: session.partition, after: cursor, maxEntries: Self.maxEntriesPerBatch, maxBytes: ProtocolLimits.targetBatchBytes,
                epoch: session.epoch)
            guard let last = entries.last else { break }
            let latest = try await storage.head(of: session.partition)?.latest.version ?? last.version.version
            // Each entry's changeset goes out as stored: no decode and encode per session.
            var batch: [EncodedDownloadEntry] = []
            for entry in entries {
                if entry.originFile == session.clientFile {
                    integrated = max(integrated, entry.originSeq)
                    batch.append(EncodedDownloadEntry(
                        serverVersion: entry.version, integratedClientSeq: integrated, changeset: EncodedDownloadEntry.emptyChangeset))
                } else {
                    batch.append(EncodedDownloadEntry(serverVersion: entry.version, integratedClientSeq: integrated, changeset: entry.encodedChangeset))
                }
            }
            guard await window.take(), await connection.isCurrent(id, generation: generation) else { return nil }
            let bytes = ServerMessage.encodedDownload(session: id, latestServerVersion: max(latest, last.version.version), entries: batch)
            try await writer.writeBinaryMessage(ByteBuffer(bytes: bytes))
            connection.service.metrics.sent(bytes: bytes.count)
            cursor = last.version.version
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
