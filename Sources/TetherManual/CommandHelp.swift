/// A command's help as ArgumentParser describes it with `--experimental-dump-help`: the part
/// of its JSON (tool info, serialization version 0) a manual page is made of.
package struct CommandHelp: Decodable, Sendable, Hashable {
    package var superCommands: [String]?
    package var shouldDisplay: Bool?
    package var commandName: String
    package var abstract: String?
    package var discussion: String?
    package var defaultSubcommand: String?
    package var subcommands: [CommandHelp]?
    package var arguments: [ArgumentHelp]?

    /// The words that call this command: `tether-server admin grant`.
    package var fullName: String { ((superCommands ?? []) + [commandName]).joined(separator: " ") }

    /// Arguments shown in help. A subcommand's `--version` and `--help` are the root's,
    /// described once there.
    package var shownArguments: [ArgumentHelp] {
        (arguments ?? []).filter { argument in
            let isRoot = (superCommands ?? []).isEmpty
            return argument.shouldDisplay && (isRoot || !["version", "help"].contains(argument.preferredName?.name ?? ""))
        }
    }

    /// Subcommands shown in help, without ArgumentParser's own `help` command.
    package var shownSubcommands: [CommandHelp] {
        (subcommands ?? []).filter { ($0.shouldDisplay ?? true) && $0.commandName != "help" }
    }
}

/// One argument of a ``CommandHelp``: positional, option or flag.
package struct ArgumentHelp: Decodable, Sendable, Hashable {
    package enum Kind: String, Decodable, Sendable {
        case positional, option, flag
    }

    package struct Name: Decodable, Sendable, Hashable {
        package var kind: String
        package var name: String

        /// `--config`, `-c` or `-long` (single dash).
        package var spelled: String { kind == "long" ? "--\(name)" : "-\(name)" }
    }

    package var kind: Kind
    package var shouldDisplay: Bool
    package var isOptional: Bool
    package var isRepeating: Bool
    package var names: [Name]?
    package var preferredName: Name?
    package var valueName: String?
    package var defaultValue: String?
    package var allValues: [String]?
    package var abstract: String?
    package var discussion: String?
}

/// The top of `--experimental-dump-help`'s document.
package struct ToolHelp: Decodable, Sendable {
    package var serializationVersion: Int
    package var command: CommandHelp
}
