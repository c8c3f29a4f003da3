import Foundation
import Glibc

/// Moves a damaged store file, with its `-wal`, `-shm` and `-journal` companions, out of the
/// way to the quarantine path, keeping it (never deleting it). Idempotent: after a crash at
/// any point, calling it again moves what is still at the store path, and a file already
/// moved stays where it is.
enum StoreQuarantine {
    static let companions = ["-wal", "-shm", "-journal", ""]

    /// Moves `store` (and companions) to `destination`; returns the files moved in this call.
    /// The companions go first, the main file last, so that nothing opens a stale `-wal`
    /// beside a new store. Files end with mode 0640 (no world access).
    @discardableResult
    static func move(store: String, to destination: String) throws(StoreQuarantineError) -> [String] {
        let directory = (destination as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
        } catch {
            throw .cannotMove(path: store, destination: destination, reason: "cannot create \(directory): \(error)")
        }
        var moved: [String] = []
        for suffix in companions where FileManager.default.fileExists(atPath: store + suffix) {
            let target = destination + suffix
            if Glibc.rename(store + suffix, target) != 0 {
                let code = errno
                guard code == EXDEV else {
                    throw .cannotMove(path: store + suffix, destination: target, reason: String(cString: strerror(code)))
                }
                try copyAcrossFileSystems(store + suffix, to: target)
            }
            chmod(target, 0o640)
            moved.append(target)
        }
        sync(directory)
        sync((store as NSString).deletingLastPathComponent)
        return moved
    }

    /// `recovery_dir` on another file system: copy (to a temporary name, then rename), then
    /// remove the original. A crash before the removal leaves both; the next call copies again.
    private static func copyAcrossFileSystems(_ source: String, to target: String) throws(StoreQuarantineError) {
        let partial = target + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        do {
            try FileManager.default.copyItem(atPath: source, toPath: partial)
            sync(partial)
            guard Glibc.rename(partial, target) == 0 else {
                throw StoreQuarantineError.cannotMove(path: source, destination: target, reason: String(cString: strerror(errno)))
            }
            try FileManager.default.removeItem(atPath: source)
        } catch let error as StoreQuarantineError {
            throw error
        } catch {
            throw .cannotMove(path: source, destination: target, reason: "\(error)")
        }
    }

    private static func sync(_ path: String) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        Glibc.close(fd)
    }
}
