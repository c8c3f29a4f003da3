/// A section 1 manual page (man(7) macros) made from a program's own argument definitions:
/// name, synopsis, description, options, and every subcommand with its own options.
package struct ManualPage: Sendable {
    package var tool: CommandHelp
    /// Footer fields of `.TH`.
    package var section: String = "1"
    package var date: String
    package var source: String
    package var manual: String = "Tether Manual"
    /// Sections the argument definitions do not carry (escaped on output).
    package var exitStatus: [(status: String, meaning: String)] = []
    package var files: [(path: String, meaning: String)] = []
    package var seeAlso: [String] = []

    package init(tool: CommandHelp, date: String, source: String) {
        self.tool = tool
        self.date = date
        self.source = source
    }

    /// The page's roff source.
    package func render() -> String {
        var lines: [String] = []
        let name = tool.commandName
        lines.append(".TH \"\(name.uppercased())\" \"\(section)\" \"\(date)\" \"\(source)\" \"\(manual)\"")
        lines.append(".SH NAME")
        lines.append("\(Roff.escapeLine(name)) \\- \(Roff.escapeLine(sentence(tool.abstract ?? "")))")
        lines.append(".SH SYNOPSIS")
        lines.append(contentsOf: synopsis(of: tool))
        for sub in tool.shownSubcommands {
            lines.append(contentsOf: synopsis(of: sub))
        }
        if let discussion = tool.discussion, !discussion.isEmpty {
            lines.append(".SH DESCRIPTION")
            lines.append(Roff.text(discussion))
        }
        if !tool.shownArguments.isEmpty {
            lines.append(".SH OPTIONS")
            lines.append(contentsOf: tool.shownArguments.flatMap(argumentItem))
        }
        if !tool.shownSubcommands.isEmpty {
            lines.append(".SH COMMANDS")
            for sub in tool.shownSubcommands { lines.append(contentsOf: commandSection(sub)) }
        }
        if !exitStatus.isEmpty {
            lines.append(".SH EXIT STATUS")
            for (status, meaning) in exitStatus {
                lines.append(".TP")
                lines.append(Roff.bold(status))
                lines.append(Roff.escapeLine(meaning))
            }
        }
        if !files.isEmpty {
            lines.append(".SH FILES")
            for (path, meaning) in files {
                lines.append(".TP")
                lines.append(Roff.italic(path))
                lines.append(Roff.escapeLine(meaning))
            }
        }
        if !seeAlso.isEmpty {
            lines.append(".SH SEE ALSO")
            lines.append(seeAlso.map(reference).joined(separator: ",\n"))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `tetherd.toml(5)` → `.BR tetherd.toml (5)`.
    private func reference(_ page: String) -> String {
        guard let open = page.firstIndex(of: "("), page.hasSuffix(")") else { return Roff.bold(page) }
        return ".BR \(Roff.escapeLine(String(page[..<open]))) \(page[open...])"
    }

    private func sentence(_ text: String) -> String {
        text.hasSuffix(".") ? String(text.dropLast()) : text
    }

    /// `.SY tether-server admin grant` … `.YS` is groff-only; plain `.B` lines read well everywhere.
    private func synopsis(of command: CommandHelp) -> [String] {
        var words = [Roff.bold(command.fullName)]
        for argument in command.shownArguments { words.append(synopsisWord(argument)) }
        if !command.shownSubcommands.isEmpty { words.append(Roff.italic("command")) }
        return [".br", words.joined(separator: " ")]
    }

    private func synopsisWord(_ argument: ArgumentHelp) -> String {
        var word: String
        switch argument.kind {
        case .positional:
            word = Roff.italic(argument.valueName ?? "value")
        case .option:
            word = Roff.bold(argument.preferredName?.spelled ?? "") + " " + Roff.italic(argument.valueName ?? "value")
        case .flag:
            word = Roff.bold(argument.preferredName?.spelled ?? "")
        }
        if argument.isRepeating { word += " ..." }
        return argument.isOptional ? "[\(word)]" : word
    }

    private func argumentItem(_ argument: ArgumentHelp) -> [String] {
        var head: String
        switch argument.kind {
        case .positional:
            head = Roff.italic(argument.valueName ?? "value")
        case .option:
            head = (argument.names ?? []).map { Roff.bold($0.spelled) + " " + Roff.italic(argument.valueName ?? "value") }
                .joined(separator: ", ")
        case .flag:
            head = (argument.names ?? []).map { Roff.bold($0.spelled) }.joined(separator: ", ")
        }
        var lines = [".TP", head]
        var text = argument.abstract ?? ""
        if let values = argument.allValues, !values.isEmpty, argument.kind != .flag {
            text += (text.isEmpty ? "" : " ") + "One of: \(values.joined(separator: ", "))."
        }
        if let value = argument.defaultValue, !value.isEmpty, argument.kind != .flag {
            text += (text.isEmpty ? "" : " ") + "Default: \(value)."
        }
        lines.append(text.isEmpty ? "\\&" : Roff.escapeLine(text))
        if let discussion = argument.discussion, !discussion.isEmpty {
            lines.append(".IP")
            lines.append(Roff.text(discussion))
        }
        return lines
    }

    /// A subcommand under COMMANDS: its words, what it does, its options, then its own subcommands.
    private func commandSection(_ command: CommandHelp) -> [String] {
        var lines = [".SS \(Roff.escapeLine(command.fullName.dropFirstWord()))"]
        lines.append(contentsOf: synopsis(of: command))
        lines.append(".PP")
        if let abstract = command.abstract, !abstract.isEmpty { lines.append(Roff.escapeLine(abstract)) }
        if let discussion = command.discussion, !discussion.isEmpty {
            lines.append(".PP")
            lines.append(Roff.text(discussion))
        }
        let arguments = command.shownArguments
        if !arguments.isEmpty {
            lines.append(".RS")
            lines.append(contentsOf: arguments.flatMap(argumentItem))
            lines.append(".RE")
        }
        for sub in command.shownSubcommands { lines.append(contentsOf: commandSection(sub)) }
        return lines
    }
}

extension String {
    /// `tether-server admin grant` → `admin grant`.
    fileprivate func dropFirstWord() -> String {
        guard let space = firstIndex(of: " ") else { return self }
        return String(self[index(after: space)...])
    }
}
