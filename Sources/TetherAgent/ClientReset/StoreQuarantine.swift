import Foundation
import Glibc
import TetherStore

/// Moves a damaged store file, with its `-wal`, `-shm` and `-journal` companions, out of the
/// way to the quarantine path, keeping it (never deleting it). Idempotent: after a crash at
/// any point, calling it again moves what is still at the store path, and a file already
/// moved stays where it is.
enum StoreQuarantine {
    static let companions = ["-wal", "-shm", "-journal", ""]

    /// Moves `store` (and companions) to `destination`; returns the files moved in this call.
    /// The companions go first, the main file last, so that nothing opens a stale `-wal`
    /// beside a new store. Files end with mode 0640 (no world access), set through a descriptor.
    ///
    /// A symbolic link at the store path, at a companion or at a destination is refused before
    /// anything moves (``StoreQuarantineError/symbolicLink(path:destination:)``): renaming a
    /// link would move the link, and the mode change would then reach its target.
    @discardableResult
    static func move(store: String, to destination: String) throws(StoreQuarantineError) -> [String] {
        for suffix in companions {
            if NoFollow.isLink(store + suffix) { throw .symbolicLink(path: store + suffix, destination: destination + suffix) }
            if NoFollow.isLink(destination + suffix) { throw .symbolicLink(path: destination + suffix, destination: destination + suffix) }
        }
        let directory = (destination as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
        } catch {
            throw .cannotMove(path: store, destination: destination, reason: "cannot create \(directory): \(error)")
        }
        var moved: [String] = []
        for suffix in companions where exists(store + suffix) {
            let target = destination + suffix
            if Glibc.rename(store + suffix, target) != 0 {
                let code = errno
                guard code == EXDEV else {
                    throw .cannotMove(path: store + suffix, destination: target, reason: String(cString: strerror(code)))
                }
                try copyAcrossFileSystems(store + suffix, to: target)
            }
            do {
                try NoFollow.setMode(target, 0o640, place: .quarantine)
            } catch .symbolicLink {
                throw .symbolicLink(path: target, destination: target)  // planted after the rename: not followed
            } catch {
                throw .cannotMove(path: store + suffix, destination: target, reason: "\(error)")
            }
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
        // An interrupted copy's, usually absent; if it stays, the copy below fails and says why.
        try? FileManager.default.removeItem(atPath: partial)
        do {
            if NoFollow.isLink(source) { throw StoreQuarantineError.symbolicLink(path: source, destination: target) }
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

    /// Whether there is a file (of any kind, a link included) at `path`.
    private static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    private static func sync(_ path: String) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        Glibc.close(fd)
    }
}
