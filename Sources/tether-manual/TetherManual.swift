import ArgumentParser
import Foundation
import TetherManual

/// Writes a program's manual page (man(7)) from the JSON its `--experimental-dump-help`
/// prints: `tetherd --experimental-dump-help | tether-manual --date 2026-11-23 > tetherd.1`.
/// Used by `make man`; not installed.
@main
struct TetherManualCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tether-manual",
        abstract: "Write a manual page from a program's --experimental-dump-help JSON (read on stdin).")

    @Option(help: "Manual section: 1 for commands, 8 for daemons and administration.")
    var section: String = "1"

    @Option(help: "Date in the page footer (YYYY-MM-DD).")
    var date: String

    @Option(help: "Source in the page footer.")
    var source: String = "Tether"

    @Option(name: .customLong("exit"), help: "An EXIT STATUS entry, STATUS=MEANING (repeatable).")
    var exitStatus: [String] = []

    @Option(name: .customLong("file"), help: "A FILES entry, PATH=MEANING (repeatable).")
    var files: [String] = []

    @Option(help: "A SEE ALSO entry such as tetherd.toml(5) (repeatable).")
    var seeAlso: [String] = []

    func run() throws {
        let input = FileHandle.standardInput.readDataToEndOfFile()
        let help = try JSONDecoder().decode(ToolHelp.self, from: input)
        var page = ManualPage(tool: help.command, date: date, source: source)
        page.section = section
        page.exitStatus = try exitStatus.map(Self.pair)
        page.files = try files.map(Self.pair)
        page.seeAlso = seeAlso
        FileHandle.standardOutput.write(Data(page.render().utf8))
    }

    private static func pair(_ text: String) throws -> (String, String) {
        guard let equals = text.firstIndex(of: "=") else { throw ValidationError("expected KEY=TEXT, got \(text)") }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }
}
