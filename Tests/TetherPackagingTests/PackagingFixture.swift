import Foundation
import TetherTestSupport

/// What `make test-packages` hands these tests: the static programs (the release build; in `make
/// test` the tests' debug configuration, linked the same way) and the packages built from them
/// (`make deb`). Run alone they fail with a hint instead of building: a static build and
/// packaging take minutes and belong to the Makefile.
enum Packaging {
    static let programs = ["tetherd", "tetherctl", "tether-server"]

    /// `TETHER_PROGRAMS_BIN`: the directory of the static build.
    static func staticPrograms() throws -> String {
        try directory("TETHER_PROGRAMS_BIN", checking: programs)
    }

    /// `TETHER_DEB_DIR`: where `make deb` put the packages; the path of `package`'s .deb.
    static func deb(_ package: String) throws -> String {
        let directory = try directory("TETHER_DEB_DIR", checking: [])
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { $0.hasPrefix(package + "_") && $0.hasSuffix(".deb") }.sorted()
        guard let name = names.last else { throw TestSupportError("no \(package)_*.deb in \(directory) (run make test-packages)") }
        return directory + "/" + name
    }

    private static func directory(_ variable: String, checking files: [String]) throws -> String {
        guard let path = ProcessInfo.processInfo.environment[variable], !path.isEmpty else {
            throw TestSupportError("\(variable) is not set: these tests run from `make test-packages` (or `make test`)")
        }
        for file in files where !FileManager.default.isExecutableFile(atPath: path + "/" + file) {
            throw TestSupportError("\(path)/\(file) is missing (run make test-packages)")
        }
        return path
    }

    /// The Swift toolchain the tests were built with: the directory above its `usr/bin/swift`
    /// (`/opt/swift` here), found from the Swift runtime this test process loaded.
    static func toolchainDirectory() throws -> String {
        // Read to the end: /proc files report size 0.
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/maps") else { throw TestSupportError("cannot read /proc/self/maps") }
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        try? handle.close()
        guard let line = maps.split(separator: "\n").first(where: { $0.hasSuffix("/libswiftCore.so") }),
            let path = line.split(separator: " ").last,
            let range = path.range(of: "/usr/lib/swift/")
        else { throw TestSupportError("cannot tell where the Swift runtime of this test process is") }
        return String(path[..<range.lowerBound])
    }

    /// Runs a shell `script` in a new mount namespace in which `hidden` is an empty directory.
    static func withoutToolchain(_ script: String, hidden: String, timeout: Duration = .seconds(120)) async throws -> ChildProcess.Result {
        let empty = try TemporaryDirectory(prefix: "tether-empty")
        defer { empty.remove() }
        let wrapped = "set -eu\nmount --bind '\(empty.path)' '\(hidden)'\n" + script
        return try await ChildProcess.run(
            try tool("unshare"), ["--mount", "--propagation", "private", "/bin/sh", "-c", wrapped], timeout: timeout)
    }

    /// A program from PATH.
    static func tool(_ name: String) throws -> String {
        for directory in ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        where FileManager.default.isExecutableFile(atPath: directory + "/" + name) {
            return directory + "/" + name
        }
        throw TestSupportError("\(name) is missing (scripts/bootstrap installs it)")
    }
}
