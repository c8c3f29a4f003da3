import ArgumentParser
import Foundation
import TetherControl
import TetherProtocol

/// `tetherctl events`: the events tetherd keeps (the last 1,000), then new ones as they happen.
struct Events: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the agent's recent events, then follow new ones until interrupted.",
        discussion: """
            Events: state, synced, changes-applied, sync-error, reset-phase, reset-outcome, hook, download, \
            reload, identity and dropped (this reader fell behind, or asked for events no longer kept). \
            With --json, one JSON object per line.
            """)
    @OptionGroup var options: GlobalOptions
    @Option(
        name: .long, help: "Only this partition's events (and those of the whole agent: reloads, connection errors).",
        completion: .custom(PartitionCompletion.names))
    var partition: String?
    @Flag(name: .long, help: "Print the kept events and exit instead of following new ones.")
    var noFollow = false
    @Option(name: .long, help: "Only the events after this seq (the last one a reader handled; numbers go on across restarts).")
    var after: UInt64?

    func run() throws {
        let request = ControlRequest(command: .events, partition: partition, follow: !noFollow, after: after)
        if noFollow {
            let result = try options.send(request)
            for event in try GlobalOptions.report(result, as: EventsReport.self).events { Self.emit(format(event)) }
            return
        }
        // The timeout bounds the wait for the daemon's answer only: a quiet stream is no timeout.
        _ = try options.stream(request) { line in
            if options.json {
                Self.emit(line)
            } else if let data = line.data(using: .utf8), let event = try? JSONDecoder().decode(AgentEvent.self, from: data) {
                // A kind this tetherctl does not know (a newer tetherd) is left out of the
                // human form, as `events` without --follow leaves it out; --json shows it.
                Self.emit(TerminalText.safe(event.humanLine))
            }
            return true
        }
        FileHandle.standardError.write(Data("tetherctl: tetherd closed the event stream (it is stopping or restarting)\n".utf8))
        throw ExitCode(1)
    }

    /// JSON as the encoder wrote it; the human line with what the server or a hook said shown
    /// safe (TerminalText): it stays one line, without terminal escapes.
    private func format(_ event: AgentEvent) -> String { options.json ? event.jsonLine : TerminalText.safe(event.humanLine) }

    /// Writes one line at once (unbuffered): a pipe gets each event as it happens.
    private static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
