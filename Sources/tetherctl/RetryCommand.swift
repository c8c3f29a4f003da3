import ArgumentParser
import TetherControl
import TetherProtocol

/// `tetherctl retry [PARTITION]`: ends the agent's backoff so it reconnects, and the partition
/// (or every partition) binds again, now instead of after the wait (`retry-now`).
struct Retry: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Retry now: end the backoff, so the agent reconnects and the partition (or every partition) binds again at once.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The partition (default: every partition).", completion: .custom(PartitionCompletion.names))
    var partition: String?
    func run() throws {
        try options.perform(ControlRequest(command: .retryNow, partition: partition), as: RetryNowReport.self, human: Self.describe)
    }

    static func describe(_ report: RetryNowReport) -> String {
        let connection = report.connection ? "reconnecting now" : "the connection was not backing off"
        let partitions = report.partitions.isEmpty ? "no partition was backing off" : "binding again: " + report.partitions.map { TerminalText.safe($0) }.joined(separator: ", ")
        return "\(connection); \(partitions)"
    }
}
