import Foundation
import Synchronization
import TetherTestSupport

/// The package's root directory (this file is `Tests/TetherSystemdTests/InstallFixture.swift`).
enum PackageRoot {
    static let path: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// A path inside the package (`"systemd/tetherd.service"`).
    static func appending(_ relative: String) -> String { path + "/" + relative }
}

/// `make install DESTDIR=<tmp> CONFIGURATION=debug` of this build, made once per test process and
/// shared by the install, unit and catalog tests. They only read it; a test that changes an
/// installation (a second install, an uninstall) works on its own copy.
///
/// `PRODUCTS_DIR` makes `make install` take the programs this test bundle was built with instead
/// of running `swift build` again: no nested SwiftPM (it would wait for this run's build lock, or
/// rebuild sources edited since), and the installed programs are exactly the tested ones.
struct Installation: Sendable {
    /// Holds the `DESTDIR` (removed when released).
    private let directory: TemporaryDirectory
    /// The `DESTDIR` everything was installed under.
    var destdir: String { directory.path }
    /// What `make install` printed.
    let output: String

    /// `make install`'s defaults (Makefile): the tests install with them.
    static let prefix = "/usr/local"
    static let bindir = prefix + "/bin"
    static let sharedir = prefix + "/share/tether"
    static let docdir = prefix + "/share/doc/tether"
    static let unitdir = "/usr/lib/systemd/system"
    static let sysusersdir = "/usr/lib/sysusers.d"
    static let tmpfilesdir = "/usr/lib/tmpfiles.d"
    static let catalogdir = "/usr/lib/systemd/catalog"
    static let sysconfdir = "/etc/tether"
    static let programs = ["tetherd", "tetherctl", "tether-server"]
    static let units = ["tetherd.service", "tether-server.service"]

    /// The path of an installed file: `DESTDIR` + its absolute path on the target system.
    func path(_ absolute: String) -> String { destdir + absolute }

    /// The shared installation, made on first use.
    static func shared() async throws -> Installation { try await sharedInstall.value }

    private static let sharedInstall = Task<Installation, any Error> {
        let directory = try TemporaryDirectory(prefix: "tether-install")
        // The shared value keeps the directory, and a static is never released: remove the
        // tree when the test process exits.
        InstallCleanup.removeAtExit(directory.path)
        let result = try await make(["install"], destdir: directory.path)
        guard result.succeeded else { throw TestSupportError("make install failed: \(result)") }
        return Installation(directory: directory, output: result.standardOutput)
    }

    /// Runs `make <targets> DESTDIR=<destdir> CONFIGURATION=debug PRODUCTS_DIR=<built products>`
    /// in the package, with none of the Makefile's variables inherited from the environment
    /// (an outer `make test PREFIX=…` passes them down in MAKEFLAGS).
    static func make(_ targets: [String], destdir: String) async throws -> ChildProcess.Result {
        let make = try Tool.path("make")
        for program in programs { _ = try BuiltProducts.executable(program) }
        var environment = ChildProcess.inheritedEnvironment()
        for name in [
            "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "SWIFT", "PREFIX", "DESTDIR", "UNITDIR",
            "SYSUSERSDIR", "TMPFILESDIR", "CATALOGDIR", "SYSCONFDIR", "CONFIGURATION", "PRODUCTS_DIR",
        ] {
            environment[name] = nil
        }
        return try await ChildProcess.run(
            make,
            ["-C", PackageRoot.path] + targets + [
                "DESTDIR=\(destdir)", "CONFIGURATION=debug", "PRODUCTS_DIR=\(BuiltProducts.directory)",
            ],
            environment: environment, timeout: .seconds(120))
    }

    /// Copies the shared installation into `target` (`cp -a`, so modes are kept), for a test
    /// that changes it.
    func copy(to target: String) async throws {
        let result = try await ChildProcess.run(try Tool.path("cp"), ["-a", destdir + "/.", target])
        guard result.succeeded else { throw TestSupportError("cp -a \(destdir) \(target) failed: \(result)") }
    }
}

/// Directories removed when the test process exits.
enum InstallCleanup {
    private static let paths = Mutex<[String]?>(nil)

    static func removeAtExit(_ path: String) {
        let first = paths.withLock { paths -> Bool in
            defer { paths = (paths ?? []) + [path] }
            return paths == nil
        }
        if first {
            atexit {
                for path in InstallCleanup.paths.withLock({ $0 ?? [] }) {
                    try? FileManager.default.removeItem(atPath: path)
                }
            }
        }
    }
}

/// Programs the tests run, looked up on `PATH` (and in the sbin directories, which a
/// non-root `PATH` may lack).
enum Tool {
    static func path(_ name: String) throws -> String {
        if let found = find(name) { return found }
        throw TestSupportError("\(name) not found on PATH (hint: apt-get install systemd make coreutils)")
    }

    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        return directories.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// A systemd unit file as `[Section]` / `Key=Value` lines (comments and blank lines dropped;
/// continuation lines are not used by Tether's units and not supported).
struct UnitFile {
    struct Entry: Equatable {
        var section: String
        var key: String
        var value: String
    }

    var entries: [Entry] = []

    init(path: String) throws {
        try self.init(text: String(contentsOfFile: path, encoding: .utf8))
    }

    init(text: String) {
        var section = ""
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            entries.append(
                Entry(
                    section: section, key: line[..<equals].trimmingCharacters(in: .whitespaces),
                    value: line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)))
        }
    }

    /// Every value of `key` in `section`, in order (systemd accumulates some keys).
    func values(_ key: String, in section: String = "Service") -> [String] {
        entries.filter { $0.section == section && $0.key == key }.map(\.value)
    }

    /// The last value of `key` (the one systemd uses for single-valued keys).
    func value(_ key: String, in section: String = "Service") -> String? { values(key, in: section).last }

    /// The program an `Exec…=` line runs (its first word, without systemd's `-@:+!` prefixes).
    func program(_ key: String) -> String? {
        guard let line = value(key) else { return nil }
        let word = line.split(separator: " ").first.map(String.init) ?? ""
        return String(word.drop { "-@:+!".contains($0) })
    }
}

/// Regular files (and symbolic links) under `root`, as paths relative to it, sorted.
func filesBelow(_ root: String) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
    var files: [String] = []
    while let relative = enumerator.nextObject() as? String {
        if let type = enumerator.fileAttributes?[.type] as? FileAttributeType, type != .typeDirectory {
            files.append(relative)
        }
    }
    return files.sorted()
}

/// The permission bits (`0o7777`) of a path, or nil when it does not exist.
func permissions(_ path: String) -> Int? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return Int(info.st_mode & 0o7777)
}

/// An octal mode for messages: `0o640` → `"0640"`.
func octal(_ mode: Int?) -> String {
    guard let mode else { return "missing" }
    let digits = String(mode, radix: 8)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
