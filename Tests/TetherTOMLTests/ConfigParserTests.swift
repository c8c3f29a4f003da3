import Testing
import TetherTOML

private enum Mode: String, CaseIterable { case recover, discard }

@Test func readsTypedValuesAndReportsUnknownKeys() throws {
    let text = """
        # comment
        state_dir = "/var/lib/tether"
        keep = 5
        typo_key = true

        [server]
        url = "ws://127.0.0.1:7800/sync"

        [[partition]]
        name = "a"

        [[partition]]
        name = "b"
        [partition.reset]
        mode = "bogus"
        extra = 1
        """
    let parser = try ConfigParser(text: text, file: "tetherd.toml")
    #expect(parser.root.string("state_dir") == "/var/lib/tether")
    #expect(parser.root.integer("keep", range: 1...10) == 5)
    #expect(parser.root.table("server")?.string("url") == "ws://127.0.0.1:7800/sync")
    let partitions = parser.root.tables("partition")
    #expect(partitions.map { $0.string("name") } == ["a", "b"])
    #expect(partitions[1].table("reset")?.enumeration("mode", Mode.self) == nil)
    #expect {
        try parser.finish()
    } throws: { error in
        let lines = (error as? ConfigError)?.problems.map(\.description) ?? []
        return lines == [
            "tetherd.toml:4: typo_key: unknown key",
            "tetherd.toml:15: partition[1].reset.mode: \"bogus\" is not one of \"recover\", \"discard\"",
            "tetherd.toml:16: partition[1].reset.extra: unknown key",
        ]
    }
}

@Test func wrongTypesAndMissingKeys() throws {
    let parser = try ConfigParser(text: "a = \"x\"\nb = [1, \"y\"]\n", file: "f.toml")
    #expect(parser.root.integer("a") == nil)
    #expect(parser.root.stringArray("b") == nil)
    #expect(parser.root.string("c", required: true) == nil)
    #expect(parser.root.absolutePath("a") == nil)
    let lines = parser.currentProblems.map(\.description)
    #expect(lines.contains("f.toml:1: a: expected an integer, found a string"))
    #expect(lines.contains("f.toml:2: b[0]: expected a string, found an integer"))
    #expect(lines.contains("f.toml: c: missing required key (a string)"))
    #expect(lines.contains("f.toml:1: a: \"x\" must be an absolute path"))
}
