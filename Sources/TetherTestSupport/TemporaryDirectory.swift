import Foundation

/// A fresh, uniquely named directory under `/tmp`, removed with everything in it when the value
/// is released (or by ``remove()``). Paths stay short so Unix socket paths fit in 108 bytes.
package final class TemporaryDirectory: Sendable {
    package let path: String

    package init(prefix: String = "tether-test") throws {
        var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else {
            throw TestSupportError("cannot create a temporary directory in /tmp: \(String(cString: strerror(errno)))")
        }
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { remove() }

    /// A path inside the directory.
    package func appending(_ name: String) -> String { path + "/" + name }

    /// Writes `text` to the file `name` in the directory and returns its path.
    @discardableResult
    package func write(_ name: String, _ text: String) throws -> String {
        let file = appending(name)
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// Removes the directory and its contents now.
    package func remove() {
        try? FileManager.default.removeItem(atPath: path)  // best effort: a leftover is in /tmp, cleared by the system
    }
}

/// Runs `body` with a fresh temporary directory that is removed afterwards.
package func withTemporaryDirectory<T>(
    prefix: String = "tether-test", _ body: (TemporaryDirectory) async throws -> T
) async throws -> T {
    let directory = try TemporaryDirectory(prefix: prefix)
    defer { directory.remove() }
    return try await body(directory)
}

/// An error of the test support itself (the environment cannot provide what a test needs).
package struct TestSupportError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
