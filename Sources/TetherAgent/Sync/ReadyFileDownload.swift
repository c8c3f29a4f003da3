import Foundation
import Glibc
import TetherSyncClient
import TetherProtocol
import TetherStore

/// Receives a partition's state as a ready file (protocol 5, docs/store.md "Ready files"): the
/// server's slices are written at their offsets into `<staging>.ready` and hashed as they come;
/// a note beside it (`<staging>.ready.json`) names the file, so a download cut at 80 % resumes
/// there at the next bind. Once the last slice is in and the SHA-256 matches, the file becomes
/// the staging store, given this device's identity, and goes on as a downloaded state does. A
/// file that does not match is removed and the note says so: the next bind asks for rows and
/// tells the server, which checks its copy.
struct ReadyFileDownload {
    let stagingPath: String

    var partPath: String { stagingPath + ".ready" }
    var notePath: String { stagingPath + ".ready.json" }

    /// What the note records.
    struct Note: Codable, Equatable {
        var digest: String
        var size: Int64
        var refused: Bool
    }

    /// What the next bind without identity says of ready files.
    func request() -> ReadyFileRequest? {
        if FaultInjection.noReadyFiles { return nil }
        guard let note = readNote(), let digest = StateFileSlice.digest(hex: note.digest) else { return .accept }
        if note.refused { return .refused(digest: digest) }
        let held = Self.size(of: partPath)
        return held > 0 && held < note.size ? .resume(digest: digest, offset: held) : .accept
    }

    /// Forgets a download (after a state arrived as rows, or to start over).
    func forget() {
        unlink(partPath)
        unlink(notePath)
    }

    func receive(
        reply: BindReply, events: inout SessionEvents.AsyncIterator, partition: PartitionName, directories: [String],
        space: DiskSpaceCheck, isolation: isolated (any Actor)? = #isolation, progress: (DownloadProgress) async -> Void
    ) async throws -> FetchedState {
        var writer: ReadyFilePartWriter? = nil
        while let event = await events.next(isolation: #isolation) {
            switch event {
            case .state(let chunk):
                guard case .file(let slice) = chunk.content else {
                    throw ReadyFileDownloadError.unexpected(partition: partition, "rows on a session bound for a ready file")
                }
                if writer == nil { writer = try start(slice, partition: partition) }
                guard let current = writer else { continue }
                guard slice.digest == current.digest, slice.offset == current.written, slice.fileSize == current.size else {
                    forget()
                    throw ReadyFileDownloadError.unexpected(partition: partition, "a slice at \(slice.offset) where \(current.written) bytes were held")
                }
                try space.check(directories: directories, progress: chunk.progress, written: current.written, chunk: Int64(slice.fileBytes))
                try current.write(try fileBytes(of: slice, writer: current, partition: partition))
                await progress(chunk.progress)
                if chunk.isLast {
                    let staging = try await install(current, version: chunk.serverVersion, partition: partition, schema: reply.schema)
                    return try await catchUp(staging, reply: reply, events: &events, partition: partition)
                }
            case .error, .disconnected, .unbound: throw SessionInterruption(event)
            case .bound, .download, .healed, .compensatingWrites, .subscriptionChunk: continue
            }
        }
        throw SessionInterruption.disconnected(nil)
    }

    /// The file's bytes a slice holds: as sent, or inflated. A slice that does not inflate is a
    /// damaged file: as after a checksum mismatch, the part is dropped and the next bind asks for rows.
    private func fileBytes(of slice: StateFileSlice, writer: ReadyFilePartWriter, partition: PartitionName) throws -> [UInt8] {
        guard case .deflate(let count) = slice.encoding else { return slice.bytes }
        guard let bytes = ReadyFileSliceCodec.inflate(slice.bytes, fileBytes: count) else {
            writer.close()
            refuse(writer)
            throw ReadyFileDownloadError.damagedSlice(partition: partition, offset: slice.offset)
        }
        return bytes
    }

    /// Drops the part file and notes that the file with `writer`'s digest is refused.
    private func refuse(_ writer: ReadyFilePartWriter) {
        unlink(partPath)
        // Best effort: the caller throws the error that counts; without the note the next bind takes a file again.
        try? writeNote(Note(digest: StateFileSlice.hex(writer.digest), size: writer.size, refused: true))
    }

    /// Opens the part file for the download's first slice: from the start, or where a cut
    /// download of the same file stopped.
    private func start(_ slice: StateFileSlice, partition: PartitionName) throws -> ReadyFilePartWriter {
        try NoFollow.refuseLinks(sqlite: partPath, place: .staging)
        try FileManager.default.createDirectory(
            atPath: (stagingPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o750])
        if slice.offset == 0 {
            forget()
            try writeNote(Note(digest: StateFileSlice.hex(slice.digest), size: slice.fileSize, refused: false))
            return try ReadyFilePartWriter(path: partPath, digest: slice.digest, size: slice.fileSize, resumeAt: 0)
        }
        guard let note = readNote(), note.digest == StateFileSlice.hex(slice.digest), note.size == slice.fileSize,
            Self.size(of: partPath) == slice.offset
        else {
            forget()
            throw ReadyFileDownloadError.unexpected(partition: partition, "a resumed slice at \(slice.offset) that this device does not hold")
        }
        return try ReadyFilePartWriter(path: partPath, digest: slice.digest, size: slice.fileSize, resumeAt: slice.offset)
    }

    /// Checks the whole file's digest, then makes it the staging store (still without an
    /// identity: until it is caught up, nothing may take it for a complete state).
    private func install(_ writer: ReadyFilePartWriter, version: ServerVersion, partition: PartitionName, schema: Schema) async throws -> PartitionStore {
        let digest = writer.finish()
        guard digest == writer.digest else {
            refuse(writer)
            throw ReadyFileDownloadError.checksumMismatch(partition: partition)
        }
        try PartitionStore.removeFilesBeforeReuse(at: stagingPath)
        guard rename(partPath, stagingPath) == 0 else {
            throw ReadyFileDownloadError.io(path: stagingPath, operation: "rename", errno: errno)
        }
        // Tests kill the agent here: a file in place as the staging store, not yet this device's.
        await FaultInjection.resetGate("ready-file-installed")
        do {
            let staging = try await PartitionStore.open(path: stagingPath, partition: partition, schema: schema, place: .staging)
            do {
                try await staging.checkReadyFileObjects()
                guard try await staging.metadata().serverVersion == version else {
                    throw ReadyFileDownloadError.unexpected(partition: partition, "a file that does not hold the version its slices named")
                }
                return staging
            } catch {
                try? staging.close()  // cleanup: the check's error is the one thrown
                throw error
            }
        } catch {
            // Not this store's damage: the file is dropped, and the next bind asks for rows.
            PartitionStore.removeFiles(at: stagingPath)
            refuse(writer)
            throw ReadyFileDownloadError.unusable(partition: partition, "\(error)")
        }
    }

    /// Brings the staging store from the file's version to the partition's version when the
    /// server accepted the bind (`latestServerVersion`), with the downloads that follow the file
    /// on the session, and only then gives it this device's identity: the state a reset
    /// recovers against is the server's at the bind, as with rows — a file built a few versions
    /// earlier must not make the recovery drop an update of a row written since (rule 2).
    private func catchUp(
        _ staging: PartitionStore, reply: BindReply, events: inout SessionEvents.AsyncIterator, partition: PartitionName,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> FetchedState {
        defer { try? staging.close() }  // its writes committed: closing only releases the file
        var version = try await staging.metadata().serverVersion
        while version.version < reply.latestServerVersion.version {
            guard let event = await events.next(isolation: #isolation) else { throw SessionInterruption.disconnected(nil) }
            switch event {
            case .download(let download):
                version = try await staging.apply(download.entries).serverVersion
            case .error, .disconnected, .unbound: throw SessionInterruption(event)
            case .bound, .state, .healed, .compensatingWrites, .subscriptionChunk: continue
            }
        }
        try await staging.completeState(serverVersion: version, clientFile: reply.identity)
        unlink(notePath)
        return FetchedState(path: stagingPath, schema: reply.schema, identity: reply.identity, serverVersion: version)
    }

    private func readNote() -> Note? {
        guard let data = FileManager.default.contents(atPath: notePath) else { return nil }
        // An unreadable note counts as none: the download starts over.
        return try? JSONDecoder().decode(Note.self, from: data)
    }

    private func writeNote(_ note: Note) throws {
        try JSONEncoder().encode(note).write(to: URL(fileURLWithPath: notePath), options: .atomic)
    }

    static func size(of path: String) -> Int64 {
        var info = stat()
        return lstat(path, &info) == 0 ? Int64(info.st_size) : 0
    }
}
