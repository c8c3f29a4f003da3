import Foundation
import Testing
import TetherProtocol

/// The release number has one source, the file `VERSION` (the Makefile reads it for the .debs
/// and the manual pages); every other place that states it says the same: the programs'
/// `--version` (``TetherVersion/release``), the Python package, CHANGELOG.md's heading of the
/// release, and README.md's package names.
@Suite struct TetherVersionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    static func version() throws -> String {
        try read("VERSION").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func versionIsARelease() throws {
        let version = try Self.version()
        let parts = version.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }, "VERSION: \(version)")
    }

    @Test func theProgramsSayTheVersion() throws {
        let version = try Self.version()
        #expect(TetherVersion.release == version)
    }

    @Test func thePythonPackageSaysTheVersion() throws {
        let package = try Self.read("python/tether_client/__init__.py")
        let version = try Self.version()
        #expect(package.contains("\n__version__ = \"\(version)\"\n"))
        let project = try Self.read("python/pyproject.toml")
        // Its version is the package's, not a number of its own.
        #expect(project.contains(#"dynamic = ["version"]"#) && project.contains(#"attr = "tether_client.__version__""#))
        #expect(!project.contains("\nversion = \""))
    }

    @Test func theChangelogHasTheReleaseAndTheReadmeItsPackages() throws {
        let version = try Self.version()
        // The manual pages take their date from this heading.
        let changelog = try Self.read("CHANGELOG.md")
        #expect(changelog.contains("\n## [\(version)] - "))
        let readme = try Self.read("README.md")
        let named = readme.components(separatedBy: "tether-agent_").dropFirst().map { $0.prefix { $0 != "_" } }
            + readme.components(separatedBy: "tether-server_").dropFirst().map { $0.prefix { $0 != "_" && $0 != "…" } }.filter { !$0.isEmpty }
        #expect(!named.isEmpty && named.allSatisfy { $0 == version }, "README.md names packages of \(Set(named)), VERSION is \(version)")
    }
}
