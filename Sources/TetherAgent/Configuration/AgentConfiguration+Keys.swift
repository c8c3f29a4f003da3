import TetherTOML

extension AgentConfiguration {
    /// Every key `tetherd.toml` accepts, as dotted paths without array indices (`state_dir`,
    /// `server.url`, `partition.reset.mode`): what the reader asks for when every table is
    /// present. docs/configuration.md, the example file and tetherd.toml(5) must name each (a
    /// test checks).
    package static var keys: [String] {
        let everyTable = """
            [control]
            [device]
            [server]
            [reset]
            [events]
            [[partition]]
            name = "p"
            [partition.reset]
            [partition.events]
            [[partition.subscription]]
            table = "t"
            """
        // A constant text: it parses.
        guard let parser = try? ConfigParser(text: everyTable, file: "keys") else { return [] }
        _ = build(parser.root)
        return parser.askedKeys
    }
}
