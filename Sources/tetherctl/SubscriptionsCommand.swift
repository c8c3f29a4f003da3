import ArgumentParser
import TetherControl
import TetherProtocol

/// `tetherctl subscriptions PARTITION`: the subscriptions the partition's store holds, those it
/// wants and those configured (`[[partition.subscription]]`), and whether a change is pending
/// (`subscriptions`). `… set --table T [--where F] …` and `… clear` change them at run time
/// (`set-subscriptions`), `--wait` until the store holds the new set (`wait-synced`).
struct Subscriptions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a partition's subscriptions, or change them at run time (set, clear).",
        discussion: """
            Without an action: the subscriptions the store holds, those it wants and those configured, and whether a change is pending.
            set --table T [--where F] [--table T2 [--where F2]] …: from now on the partition wants these (each --where filters the --table before it; a --table without --where holds the whole table), kept across restarts until clear or until the configured subscriptions change. clear: the configured subscriptions are in force again.
            A change is made by the server at the partition's next bind, without a reset; --wait waits until the store holds the new set (--timeout, default 60 s).
            """)

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case set, clear
    }

    @OptionGroup var options: GlobalOptions
    @Argument(help: "The partition.", completion: .custom(PartitionCompletion.names))
    var partition: String
    @Argument(help: "set or clear (none: show them).")
    var action: Action?
    @Flag(name: .long, help: "set, clear: wait until the store holds the new subscriptions (--timeout, default 60 s).")
    var wait = false
    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp("set: --table T, optionally followed by --where F, once per subscription.", valueName: "--table T [--where F]"))
    var subscriptionArguments: [String] = []

    func validate() throws {
        switch action {
        case nil:
            guard subscriptionArguments.isEmpty else {
                throw ValidationError("unexpected \(subscriptionArguments.joined(separator: " ")): subscriptions P set --table T [--where F] …")
            }
            guard !wait else { throw ValidationError("--wait goes with set or clear") }
        case .clear:
            guard subscriptionArguments.isEmpty else { throw ValidationError("clear takes no subscriptions") }
        case .set:
            _ = try Self.subscriptions(from: subscriptionArguments)
        }
    }

    func run() throws {
        guard let action else {
            try options.perform(ControlRequest(command: .subscriptions, partition: partition), as: SubscriptionsReport.self, human: Self.describe)
            return
        }
        let request = switch action {
        case .set: ControlRequest(command: .setSubscriptions, partition: partition, subscriptions: try Self.subscriptions(from: subscriptionArguments))
        case .clear: ControlRequest(command: .setSubscriptions, partition: partition, clear: true)
        }
        let done = action == .set ? "set at run time" : "set at run time cleared: the configured ones are in force"
        guard wait else {
            try options.perform(request, as: SubscriptionsReport.self) { "subscriptions of \(partition) \(done)\n" + Self.describe($0) }
            return
        }
        _ = try options.send(request)
        // The daemon gives up after `timeout`; the client waits a little longer for that answer.
        let timeout = options.timeout ?? 60
        _ = try options.send(ControlRequest(command: .waitSynced, partition: partition, timeout: timeout), timeout: timeout + 10)
        try options.perform(ControlRequest(command: .subscriptions, partition: partition), as: SubscriptionsReport.self) {
            "subscriptions of \(partition) \(done); the store holds them\n" + Self.describe($0)
        }
    }

    /// `--table T [--where F]` pairs, in order (`--table=T`, `--where=F` too): each `--where`
    /// filters the `--table` before it.
    static func subscriptions(from arguments: [String]) throws -> [Tether.Subscription] {
        var subscriptions: [Tether.Subscription] = []
        var index = 0
        func value(_ name: String) throws -> String {
            let argument = arguments[index]
            if argument.hasPrefix("--\(name)=") { return String(argument.dropFirst(name.count + 3)) }
            index += 1
            guard index < arguments.count else { throw ValidationError("--\(name) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--table" || argument.hasPrefix("--table=") {
                subscriptions.append(Tether.Subscription(table: try value("table")))
            } else if argument == "--where" || argument.hasPrefix("--where=") {
                guard let last = subscriptions.indices.last else { throw ValidationError("--where filters the --table before it: give --table first") }
                guard subscriptions[last].filter == nil else { throw ValidationError("one --where per --table (combine filters with AND, OR)") }
                subscriptions[last].filter = try value("where")
            } else {
                throw ValidationError("unexpected \(argument): set takes --table T [--where F], once per subscription")
            }
            index += 1
        }
        guard !subscriptions.isEmpty else { throw ValidationError("set needs at least one --table (clear goes back to the configured subscriptions)") }
        return subscriptions
    }

    static func describe(_ report: SubscriptionsReport) -> String {
        var lines: [String] = []
        let name = TerminalText.safe(report.partition)
        if report.hasStore {
            lines.append("held (digest \(TerminalText.safe(report.heldDigest))):")
            lines += set(report.held)
        } else {
            lines.append("held: no store yet (it takes the wanted subscriptions when it bootstraps)")
        }
        if report.runtime == true {
            lines.append("wanted, set at run time (digest \(TerminalText.safe(report.wantedDigest))):")
            lines += set(report.wanted)
            lines.append("configured (digest \(TerminalText.safe(report.configuredDigest ?? "?"))), in force again after `tetherctl subscriptions \(name) clear` or a change of the configured ones:")
            lines += set(report.configured)
        } else {
            lines.append("configured (digest \(TerminalText.safe(report.wantedDigest))):")
            lines += set(report.wanted)
        }
        lines.append(
            report.changePending
                ? "a change is pending: the server sends the rows entering and leaving at the next bind; \(name) is not synced until it is done"
                : "no change pending")
        return lines.joined(separator: "\n")
    }

    private static func set(_ subscriptions: [String]?) -> [String] {
        guard let subscriptions else { return ["  the whole partition"] }
        if subscriptions.isEmpty { return ["  nothing"] }
        return subscriptions.map { "  " + TerminalText.safe($0) }
    }
}
