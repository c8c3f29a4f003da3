import Foundation
import Testing
import TetherTestSupport

/// `packaging/copyright`, which both packages install, is what `scripts/generate-copyright`
/// makes from the resolved Swift packages the programs link and the toolchain's static
/// libraries: a dependency added, updated or dropped without regenerating the file fails here
/// (docs/operations.md, "The Debian packages").
@Suite struct CopyrightTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/generate-copyright").path

    /// The script, with the Swift toolchain these tests were built with.
    static func generate(_ arguments: [String]) async throws -> ChildProcess.Result {
        let swift = try Packaging.toolchainDirectory() + "/usr/bin/swift"
        return try await ChildProcess.run(
            try Packaging.tool("python3"), [script] + arguments,
            environment: ChildProcess.inheritedEnvironment(adding: ["SWIFT": swift]), timeout: .seconds(300))
    }

    @Test func theCommittedFileIsCurrent() async throws {
        let check = try await Self.generate(["--check"])
        #expect(check.succeeded, "packaging/copyright is stale, run scripts/generate-copyright:\n\(check)")
    }

    /// The components the script follows through the manifests are all the static build
    /// links: every module in each program's link list belongs to one of them.
    @Test func everyLinkedModuleIsListed() async throws {
        let check = try await Self.generate(["--output", "/dev/null", "--link-lists", try Packaging.staticPrograms()])
        #expect(check.succeeded, "\(check)")
    }

    /// What Debian wants of the file: the machine-readable format, every program's bundled
    /// licences named, and the full text of each licence that is not in /usr/share/common-licenses.
    @Test func theFileHasEveryBundledLicence() throws {
        let copyright = try String(
            contentsOfFile: URL(fileURLWithPath: Self.script).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("packaging/copyright").path, encoding: .utf8)
        #expect(copyright.hasPrefix("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"))
        let paragraphs = copyright.components(separatedBy: "\n\n")
        let programs = try #require(paragraphs.first { $0.hasPrefix("Files: usr/bin/*\n") }, "no paragraph for usr/bin/*")
        let licenceLine = try #require(programs.split(separator: "\n").first { $0.hasPrefix("License: ") })
        let licences = licenceLine.dropFirst("License: ".count).components(separatedBy: " and ")
        // What the static programs carry: Swift runtime and Foundation, BoringSSL's packages, ICU, zlib.
        for expected in ["Apache-2.0", "Apache-2.0 with Swift exception", "Expat", "Unicode-3.0", "Zlib", "BSD-3-clause"] {
            #expect(licences.contains(expected), "\(expected) is missing from \(licenceLine)")
        }
        for component in ["BoringSSL", "zlib", "toml++", "GRDB.swift", "ICU", "Foundation", "llhttp"] {
            #expect(programs.contains("\n \(component)"), "component \(component) is not listed")
        }
        for licence in licences {
            let paragraph = try #require(paragraphs.first { $0.hasPrefix("License: \(licence)\n") }, "no text for \(licence)")
            if licence == "Apache-2.0" || licence == "CC0-1.0" {
                #expect(paragraph.contains("/usr/share/common-licenses/\(licence)"))
            } else {
                #expect(paragraph.split(separator: "\n").count > 5, "\(licence) is not given in full: \(paragraph)")
            }
        }
    }
}
