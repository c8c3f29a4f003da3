import Foundation
import Testing
import TetherManual

/// A tool's help as ArgumentParser 1.8 dumps it (trimmed to what a page uses).
private let sample = """
    {"serializationVersion":0,"command":{"commandName":"tetherctl","abstract":"Operator CLI for a running tetherd.",
     "discussion":"Exit status: 0 success.\\n\\n.dots and back\\\\slashes",
     "arguments":[
      {"kind":"option","shouldDisplay":true,"isOptional":true,"isRepeating":false,"parsingStrategy":"default",
       "names":[{"kind":"long","name":"socket"}],"preferredName":{"kind":"long","name":"socket"},
       "valueName":"socket","defaultValue":"/run/tether/tetherd.sock","abstract":"Control socket of the agent."},
      {"kind":"flag","shouldDisplay":false,"isOptional":true,"isRepeating":false,"parsingStrategy":"default",
       "names":[{"kind":"long","name":"hidden"}],"preferredName":{"kind":"long","name":"hidden"}}],
     "subcommands":[{"superCommands":["tetherctl"],"commandName":"pause","abstract":"Stop syncing one partition.",
       "arguments":[{"kind":"positional","shouldDisplay":true,"isOptional":false,"isRepeating":false,
        "parsingStrategy":"default","valueName":"partition","abstract":"Partition name."}]}]}}
    """

@Suite struct ManualPageTests {
    private func page() throws -> String {
        let help = try JSONDecoder().decode(ToolHelp.self, from: Data(sample.utf8))
        var page = ManualPage(tool: help.command, date: "2026-11-23", source: "Tether 0.1.0")
        page.exitStatus = [("3", "the daemon cannot be reached")]
        page.seeAlso = ["tetherd(8)", "tetherd.toml(5)"]
        return page.render()
    }

    @Test func headerNameAndSynopsis() throws {
        let text = try page()
        #expect(text.hasPrefix(".TH \"TETHERCTL\" \"1\" \"2026-11-23\" \"Tether 0.1.0\" \"Tether Manual\"\n"))
        #expect(text.contains(".SH NAME\ntetherctl \\- Operator CLI for a running tetherd\n"))
        #expect(text.contains("\\fBtetherctl\\fR [\\fB\\-\\-socket\\fR \\fIsocket\\fR] \\fIcommand\\fR"))
        #expect(text.contains("\\fBtetherctl pause\\fR \\fIpartition\\fR"))
    }

    @Test func optionsWithDefaultsAndNoHiddenOnes() throws {
        let text = try page()
        #expect(text.contains(".TP\n\\fB\\-\\-socket\\fR \\fIsocket\\fR\nControl socket of the agent. Default: /run/tether/tetherd.sock.\n"))
        #expect(!text.contains("hidden"))
    }

    @Test func subcommandsExitStatusAndSeeAlso() throws {
        let text = try page()
        #expect(text.contains(".SH COMMANDS\n.SS pause\n"))
        #expect(text.contains(".SH EXIT STATUS\n.TP\n\\fB3\\fR\nthe daemon cannot be reached\n"))
        #expect(text.contains(".SH SEE ALSO\n.BR tetherd (8),\n.BR tetherd.toml (5)\n"))
    }

    @Test func textCannotStartARoffRequest() {
        #expect(Roff.text(".dots\n\n'quote\\x-y") == "\\&.dots\n.PP\n\\&'quote\\ex\\-y")
    }
}

@Suite struct CommandHelpTests {
    @Test func helpCommandAndInheritedVersionAreLeftOut() throws {
        let json = """
            {"commandName":"tool","arguments":[
              {"kind":"flag","shouldDisplay":true,"isOptional":true,"isRepeating":false,"names":[{"kind":"long","name":"version"}],"preferredName":{"kind":"long","name":"version"}}],
             "subcommands":[
              {"superCommands":["tool"],"commandName":"help","arguments":[]},
              {"superCommands":["tool"],"commandName":"run","arguments":[
                {"kind":"flag","shouldDisplay":true,"isOptional":true,"isRepeating":false,"names":[{"kind":"long","name":"version"}],"preferredName":{"kind":"long","name":"version"}},
                {"kind":"flag","shouldDisplay":true,"isOptional":true,"isRepeating":false,"names":[{"kind":"long","name":"fast"}],"preferredName":{"kind":"long","name":"fast"}}]}]}
            """
        let help = try JSONDecoder().decode(CommandHelp.self, from: Data(json.utf8))
        #expect(help.shownArguments.count == 1)
        #expect(help.shownSubcommands.map(\.commandName) == ["run"])
        #expect(help.shownSubcommands[0].shownArguments.map { $0.preferredName?.name } == ["fast"])
    }
}
