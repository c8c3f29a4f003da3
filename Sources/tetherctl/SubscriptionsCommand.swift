import ArgumentParser
import TetherControl
import TetherProtocol

/// `tetherctl subscriptions PARTITION`: the subscriptions the partition's store holds and those
/// configured (`[[partition.subscription]]`), and whether a change is pending (`subscriptions`).
struct Subscriptions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the subscriptions a partition's store holds and those configured, and whether a change is pending.",
        discussion: "A change is made by the server at the partition's next bind (a reload binds it again), without a reset.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The partition.", completion: .custom(PartitionCompletion.names))
    var partition: String
    func run() throws {
        try options.perform(ControlRequest(command: .subscriptions, partition: partition), as: SubscriptionsReport.self, human: Self.describe)
    }

    static func describe(_ report: SubscriptionsReport) -> String {
        var lines: [String] = []
        let name = TerminalText.safe(report.partition)
        if report.hasStore {
            lines.append("held (digest \(TerminalText.safe(report.heldDigest))):")
            lines += set(report.held)
        } else {
            lines.append("held: no store yet (it takes the configured subscriptions when it bootstraps)")
        }
        lines.append("configured (digest \(TerminalText.safe(report.wantedDigest))):")
        lines += set(report.wanted)
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
