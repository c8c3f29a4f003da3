import Testing
import TetherTestSupport
@testable import TetherServer

/// Every key `tether-server.toml` accepts is in docs/server.md, in the example file
/// `etc/tether-server.toml` and in tether-server.toml(5); and none of them names a key that is
/// not accepted.
@Suite struct ServerConfigurationKeyCoverageTests {
    @Test func everyServerKeyIsDocumentedInEveryPlace() throws {
        let accepted = ServerConfiguration.keys
        #expect(accepted.count > 25, "\(accepted)")
        #expect(accepted.contains("storage.max_state_downloads") && accepted.contains("devices.max_entries") && accepted.contains("grant.access"))
        for (document, keys) in [
            ("docs/server.md", ConfigurationDocuments.markdownKeys(try ConfigurationDocuments.read("docs/server.md"), sections: ["## Configuration (`tether-server.toml`)": "", "### Limits": "limits"])),
            ("etc/tether-server.toml", ConfigurationDocuments.exampleKeys(try ConfigurationDocuments.read("etc/tether-server.toml"))),
            ("man/tether-server.toml.5", ConfigurationDocuments.manKeys(try ConfigurationDocuments.read("man/tether-server.toml.5"))),
        ] {
            #expect(ConfigurationDocuments.missing(accepted, in: keys).isEmpty, "\(document) lacks \(ConfigurationDocuments.missing(accepted, in: keys))")
            let unknown = keys.filter { !$0.hasSuffix(".*") && !accepted.contains($0) }
            #expect(unknown.isEmpty, "\(document) names keys tether-server does not accept: \(unknown.sorted())")
        }
    }
}
