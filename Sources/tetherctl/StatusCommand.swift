import ArgumentParser
import Foundation
import Glibc
import TetherControl

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the connection and every partition's sync state (--watch: keep refreshing).")
    @OptionGroup var options: GlobalOptions
    @Flag(name: .long, help: "Refresh until interrupted: a redrawn table on a terminal, one table after another otherwise.")
    var watch = false
    @Option(name: .long, help: "Seconds between two refreshes with --watch.")
    var interval: Double = 2

    func validate() throws {
        guard interval >= 0.1 else { throw ValidationError("--interval must be at least 0.1") }
    }

    func run() throws {
        let request = ControlRequest(command: .status)
        guard watch else {
            try options.perform(request, as: StatusReport.self, human: StatusFormatter.status)
            return
        }
        let terminal = isatty(STDOUT_FILENO) == 1 && !options.json
        while true {
            let text = try options.render(try options.send(request), as: StatusReport.self, human: StatusFormatter.status)
            if terminal {
                // Home, clear, table: the operator sees one table that changes in place.
                Self.write("\u{1B}[H\u{1B}[2J" + "every \(Self.seconds(interval)) s, \(Self.clock())  (Ctrl-C to stop)\n\n" + text + "\n")
            } else {
                Self.write(text + "\n\n")
            }
            Thread.sleep(forTimeInterval: interval)
        }
    }

    /// Unbuffered: each refresh reaches a pipe at once.
    static func write(_ text: String) { FileHandle.standardOutput.write(Data(text.utf8)) }

    static func seconds(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }

    static func clock() -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss"
        return formatter.string(from: Date())
    }
}

struct Metrics: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the agent's metrics in the Prometheus text format.")
    @OptionGroup var options: GlobalOptions
    func run() throws {
        let result = try options.send(ControlRequest(command: .metrics))
        if options.json {
            print(GlobalOptions.pretty(result))
        } else {
            FileHandle.standardOutput.write(Data(try GlobalOptions.report(result, as: MetricsReport.self).text.utf8))
        }
    }
}
