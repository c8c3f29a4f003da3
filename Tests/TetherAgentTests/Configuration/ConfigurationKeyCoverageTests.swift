import Testing
import TetherTestSupport
@testable import TetherAgent

/// Every key `tetherd.toml` accepts is in docs/configuration.md, in the example file
/// `etc/tetherd.toml` and in tetherd.toml(5); and none of them names a key that is not accepted.
@Suite struct ConfigurationKeyCoverageTests {
    @Test func everyAgentKeyIsDocumentedInEveryPlace() throws {
        let accepted = AgentConfiguration.keys
        #expect(accepted.count > 20, "\(accepted)")
        #expect(accepted.contains("device.report_interval_seconds") && accepted.contains("partition.reset.mode"))
        for (document, keys) in [
            ("docs/configuration.md", ConfigurationDocuments.markdownKeys(try ConfigurationDocuments.read("docs/configuration.md"), sections: ["## Keys": ""])),
            ("etc/tetherd.toml", ConfigurationDocuments.exampleKeys(try ConfigurationDocuments.read("etc/tetherd.toml"))),
            ("man/tetherd.toml.5", ConfigurationDocuments.manKeys(try ConfigurationDocuments.read("man/tetherd.toml.5"))),
        ] {
            #expect(ConfigurationDocuments.missing(accepted, in: keys).isEmpty, "\(document) lacks \(ConfigurationDocuments.missing(accepted, in: keys))")
            let unknown = keys.filter { !$0.hasSuffix(".*") && !accepted.contains($0) }
            #expect(unknown.isEmpty, "\(document) names keys tetherd does not accept: \(unknown.sorted())")
        }
    }
}
