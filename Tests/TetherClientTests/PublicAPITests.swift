import Foundation
import Testing
import TetherTestSupport

/// The library product's public API, as the compiler sees it, against the list kept in
/// `PublicAPI.txt`: an application imports `TetherClient` (which re-exports `TetherControl`),
/// so a declaration added to, changed in or removed from either module is a change to the
/// library's API, made on purpose and reviewed with the list. Every other module of the package
/// declares `package`, not `public` (docs/architecture.md "Access").
///
/// After an intended change, rewrite the list with
/// `TETHER_UPDATE_PUBLIC_API=1 swift test --filter PublicAPITests` and commit it with the change.
@Suite struct PublicAPITests {
    static let modules = ["TetherClient", "TetherControl"]
    static let listPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("PublicAPI.txt").path

    @Test func theLibraryExportsExactlyTheListedDeclarations() async throws {
        var lines: [String] = []
        for module in Self.modules { lines += try await Self.publicDeclarations(of: module) }
        let listed = try String(contentsOfFile: Self.listPath, encoding: .utf8)
        let current = lines.sorted().joined(separator: "\n") + "\n"
        if ProcessInfo.processInfo.environment["TETHER_UPDATE_PUBLIC_API"] == "1" {
            try current.write(toFile: Self.listPath, atomically: true, encoding: .utf8)
            return
        }
        let was = Set(listed.split(separator: "\n").map(String.init))
        let now = Set(lines)
        let added = now.subtracting(was).sorted()
        let removed = was.subtracting(now).sorted()
        #expect(
            added.isEmpty && removed.isEmpty,
            """
            the public API of \(Self.modules.joined(separator: " and ")) differs from \(Self.listPath)
            (if intended: TETHER_UPDATE_PUBLIC_API=1 swift test --filter PublicAPITests)
            added:\n\(added.map { "  + " + $0 }.joined(separator: "\n"))
            removed:\n\(removed.map { "  - " + $0 }.joined(separator: "\n"))
            """)
        // The list is not empty by accident: the calls an application makes are in it.
        #expect(now.contains { $0.hasPrefix("TetherClient: TetherClient.waitSynced(partition:timeout:) ") })
    }

    /// One line per public symbol of `module`: the module, the symbol's path and its declaration,
    /// from the compiler's symbol graph of the built module.
    static func publicDeclarations(of module: String) async throws -> [String] {
        let output = try TemporaryDirectory(prefix: "public-api")
        defer { output.remove() }
        let result = try await ChildProcess.run(
            try Self.symbolGraphExtractor(),
            [
                "-module-name", module, "-target", Self.targetTriple,
                "-I", BuiltProducts.directory + "/Modules",
                "-minimum-access-level", "public", "-skip-synthesized-members",
                "-output-dir", output.path,
            ],
            timeout: .seconds(120))
        guard result.succeeded else { throw TestSupportError("swift-symbolgraph-extract for \(module) failed: \(result)") }
        var lines: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: output.path) where name.hasSuffix(".symbols.json") {
            let data = try Data(contentsOf: URL(fileURLWithPath: output.path + "/" + name))
            let graph = try JSONDecoder().decode(SymbolGraph.self, from: data)
            for symbol in graph.symbols {
                let declaration = symbol.declarationFragments.map(\.spelling).joined()
                    .split(whereSeparator: \.isWhitespace).joined(separator: " ")
                lines.append("\(module): \(symbol.pathComponents.joined(separator: ".")) \(declaration)")
            }
        }
        return lines
    }

    /// The toolchain's `swift-symbolgraph-extract`, found on `PATH` as `swift` is.
    static func symbolGraphExtractor() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/swift-symbolgraph-extract"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw TestSupportError("swift-symbolgraph-extract is not on PATH (it ships with the Swift toolchain)")
    }

    static var targetTriple: String {
        #if arch(x86_64)
            "x86_64-unknown-linux-gnu"
        #else
            "aarch64-unknown-linux-gnu"
        #endif
    }

    struct SymbolGraph: Decodable {
        struct Symbol: Decodable {
            struct Fragment: Decodable { var spelling: String }
            var pathComponents: [String]
            var declarationFragments: [Fragment]
        }
        var symbols: [Symbol]
    }
}
