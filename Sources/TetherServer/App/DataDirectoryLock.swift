import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on `data_dir/server.lock`, held while a server (or
/// `restore-backup`) uses the directory, so two never share it.
package final class DataDirectoryLock: Sendable {
    package static let fileName = "server.lock"
    private let descriptor: Int32

    package struct Busy: Error, CustomStringConvertible {
        package var description: String
    }

    package init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = (directory as NSString).appendingPathComponent(Self.fileName)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw Busy(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw Busy(description: "\(directory) is in use by another tether-server (\(path) is locked)")
        }
        descriptor = fd
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
