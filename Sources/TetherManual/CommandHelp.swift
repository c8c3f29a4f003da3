/// A command's help as ArgumentParser describes it with `--experimental-dump-help`: the part
/// of its JSON (tool info, serialization version 0) a manual page is made of.
public struct CommandHelp: Decodable, Sendable, Hashable {
    public var superCommands: [String]?
    public var shouldDisplay: Bool?
    public var commandName: String
    public var abstract: String?
    public var discussion: String?
    public var defaultSubcommand: String?
    public var subcommands: [CommandHelp]?
    public var arguments: [ArgumentHelp]?

    /// The words that call this command: `tether-server admin grant`.
    public var fullName: String { ((superCommands ?? []) + [commandName]).joined(separator: " ") }

    /// Arguments shown in help. A subcommand's `--version` and `--help` are the root's,
    /// described once there.
    public var shownArguments: [ArgumentHelp] {
        (arguments ?? []).filter { argument in
            let isRoot = (superCommands ?? []).isEmpty
            return argument.shouldDisplay && (isRoot || !["version", "help"].contains(argument.preferredName?.name ?? ""))
        }
    }

    /// Subcommands shown in help, without ArgumentParser's own `help` command.
    public var shownSubcommands: [CommandHelp] {
        (subcommands ?? []).filter { ($0.shouldDisplay ?? true) && $0.commandName != "help" }
    }
}

/// One argument of a ``CommandHelp``: positional, option or flag.
public struct ArgumentHelp: Decodable, Sendable, Hashable {
    public enum Kind: String, Decodable, Sendable {
        case positional, option, flag
    }

    public struct Name: Decodable, Sendable, Hashable {
        public var kind: String
        public var name: String

        /// `--config`, `-c` or `-long` (single dash).
        public var spelled: String { kind == "long" ? "--\(name)" : "-\(name)" }
    }

    public var kind: Kind
    public var shouldDisplay: Bool
    public var isOptional: Bool
    public var isRepeating: Bool
    public var names: [Name]?
    public var preferredName: Name?
    public var valueName: String?
    public var defaultValue: String?
    public var allValues: [String]?
    public var abstract: String?
    public var discussion: String?
}

/// The top of `--experimental-dump-help`'s document.
public struct ToolHelp: Decodable, Sendable {
    public var serializationVersion: Int
    public var command: CommandHelp
}
