import Testing
import TetherTestSupport

/// The agent's folders depend one way, top to bottom (docs/architecture.md, "Modules and
/// folders"). A new folder must be placed here; a use upward is a design question, not a
/// test to loosen: move the shared piece down instead.
@Test func theAgentsFoldersDependOneWay() throws {
    let layering = try SourceLayering(module: "TetherAgent")
    let (violations, unplaced) = layering.violations(layers: [
        ["Agent"],
        ["Enrollment"],
        ["Control"],
        ["Sync"],
        ["ClientReset"],
        ["Events"],
        ["Hooks"],
        ["Observability"],
        ["State"],
        ["Records"],
        ["Configuration", "Logging", "Support"],
    ])
    #expect(unplaced.isEmpty, "folders with no place in the layering: \(unplaced.sorted())")
    #expect(violations.isEmpty, "uses against the layering:\n\(violations.map(\.description).joined(separator: "\n"))")
}

@Test func commentsAndStringsAreNotUses() {
    let code = SourceLayering.code(of: """
        /// ResetRecord in a doc comment
        let a = "ResetRecord in a string, with \\"quotes\\" and // no comment"
        /* Backoff /* nested */ still a comment */ let b = Backoff()
        let c = \"\"\"
            HookRunner in a multi-line string
            \"\"\"
        """)
    #expect(!code.contains("ResetRecord"))
    #expect(!code.contains("HookRunner"))
    #expect(!code.contains("nested"))
    #expect(code.contains("let b = Backoff()"))
    #expect(code.contains("let c ="))
}
