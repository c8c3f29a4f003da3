import Testing
import TetherTestSupport

/// The server's folders depend one way, top to bottom (docs/architecture.md, "Folders inside
/// the agent and the server"). A new folder must be placed here; a use upward means a shared
/// piece belongs lower down (as the rebind fence moved out of Admin into Sync).
@Test func theServersFoldersDependOneWay() throws {
    let layering = try SourceLayering(module: "TetherServer")
    let (violations, unplaced) = layering.violations(layers: [
        ["App"],
        ["Observability", "Console"],
        ["Admin"],
        ["Sync"],
        ["ReadyFiles"],
        ["Cluster"],
        ["Connections"],
        ["Metrics"],
        ["Storage"],
        ["Auth"],
        ["Config"],
    ])
    #expect(unplaced.isEmpty, "folders with no place in the layering: \(unplaced.sorted())")
    #expect(violations.isEmpty, "uses against the layering:\n\(violations.map(\.description).joined(separator: "\n"))")
}
