import Foundation
import Testing

/// The paths the documentation tells a user of the Debian package are the ones the package
/// installs (`scripts/build-deb` lists them): the example hooks.
@Suite struct DocumentedPathsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func theExampleHooksAreWhereThePackagePutsThem() throws {
        #expect(try Self.read("scripts/build-deb").contains(" usr/share/tether/hooks "))
        for document in ["etc/tetherd.toml", "docs/hooks.md", "docs/events.md", "README.md"] {
            let text = try Self.read(document)
            #expect(text.contains("/usr/share/tether/hooks"), "\(document) names the packaged hooks")
            // /usr/local/share/tether/hooks only beside the words that say it is make install's.
            for line in text.split(separator: "\n") where line.contains("/usr/local/share/tether/hooks") {
                #expect(line.contains("make install") || line.contains("PREFIX"), "\(document): \(line)")
            }
        }
    }
}
