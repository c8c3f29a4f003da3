import Foundation
import TetherTestSupport

/// A small tmpfs mounted as an agent's state directory, for full-disk faults (needs root with
/// `CAP_SYS_ADMIN`, as on this machine and CI).
struct SmallDisk: Sendable {
    let path: String
    private var filler: String { path + "/filler" }

    /// Mounts a tmpfs of `megabytes` at `path` (created if missing).
    static func mount(at path: String, megabytes: Int) async throws -> SmallDisk {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let mounted = try await ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0755", "tmpfs", path])
        guard mounted.succeeded else {
            throw TestSupportError("cannot mount a tmpfs: \(mounted.standardError.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        return SmallDisk(path: path)
    }

    var isFull: Bool { FileManager.default.fileExists(atPath: filler) }

    /// Writes a file until the file system has no room left.
    func fill() {
        let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0xA5, count: 1 << 20)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Removes what ``fill()`` wrote.
    func free() { unlink(filler) }

    /// A lazy unmount: never blocks, even while a process still has files open there.
    func unmount() { _ = umount2(path, 2) }  // MNT_DETACH
}
