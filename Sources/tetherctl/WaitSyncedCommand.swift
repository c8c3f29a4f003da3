import ArgumentParser
import Dispatch
import Foundation
import Glibc
import Synchronization
import TetherControl
import TetherProtocol

struct WaitSynced: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wait-synced",
        abstract: "Wait until every local change is uploaded and the store holds the server's latest version (--timeout, default 60 s).")
    @OptionGroup var options: GlobalOptions
    @Flag(
        name: .long,
        help: "Show a bootstrap's or a reset's download while waiting: one updating line on a terminal, a line at each further 10 % otherwise.")
    var progress = false
    @Argument(help: "The partition.", completion: .custom(PartitionCompletion.names))
    var partition: String

    func run() throws {
        let timeout = options.timeout ?? 60
        let request = ControlRequest(command: .waitSynced, partition: partition, timeout: timeout)
        let human: (WaitSyncedReport) -> String = { [partition] result in
            "\(partition) synced at server version \(result.serverVersion)"
        }
        // The daemon gives up after `timeout`; the client waits a little longer for that answer.
        guard progress else {
            try options.perform(request, as: WaitSyncedReport.self, timeout: timeout + 10, human: human)
            return
        }
        let result = try waitShowingProgress(request, timeout: timeout + 10)
        let text = try options.render(result, as: WaitSyncedReport.self, human: human)
        if !text.isEmpty { print(text) }
    }

    /// Sends the wait on its own thread; meanwhile reads the partition's status twice a second
    /// and shows its download.
    private func waitShowingProgress(_ request: ControlRequest, timeout: Double) throws -> JSONValue {
        let answer = Mutex<Result<JSONValue, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let options = self.options
        DispatchQueue.global().async {
            let result = Result { try options.send(request, timeout: timeout) }
            answer.withLock { $0 = result }
            done.signal()
        }
        let terminal = isatty(STDOUT_FILENO) == 1
        var shown = ProgressLine.Shown()
        while done.wait(timeout: .now() + 0.5) == .timedOut {
            // A status that cannot be had now is skipped: the line waits for the next one.
            guard let result = try? self.options.send(ControlRequest(command: .status), timeout: 2),
                let status = try? result.decode(as: StatusReport.self),
                let line = ProgressLine.line(partition: partition, status: status)
            else { continue }
            if terminal {
                FileHandle.standardOutput.write(Data("\r\u{1B}[2K\(line.text)".utf8))
            } else if shown.isNew(line) {
                FileHandle.standardOutput.write(Data("\(line.text)\n".utf8))
            }
        }
        if terminal { FileHandle.standardOutput.write(Data("\r\u{1B}[2K".utf8)) }
        return try answer.withLock { $0 }!.get()
    }
}

/// The one-line view of a partition's download for `wait-synced --progress`.
enum ProgressLine {
    struct Line {
        var text: String
        var state: String
        /// Tens of per cent done (0 … 10), nil without a download.
        var decile: Int?
    }

    /// What a non-terminal output already printed: a new line only for another state or decile.
    struct Shown {
        var last: (state: String, decile: Int?)?

        mutating func isNew(_ line: Line) -> Bool {
            if let last, last.state == line.state, last.decile == line.decile { return false }
            last = (line.state, line.decile)
            return true
        }
    }

    static func line(partition: String, status: StatusReport) -> Line? {
        guard let entry = status.partitions.first(where: { $0.name == partition }) else { return nil }
        let state = TerminalText.safe(entry.state)
        guard let download = entry.download else {
            return Line(text: "\(partition): \(state), \(entry.unsyncedChanges) unsynced changes", state: state, decile: nil)
        }
        let rowsDone = Double(download.rowsDone), rowsTotal = Double(download.rowsTotal)
        let bytesDone = Double(download.bytesDone), bytesTotal = Double(download.bytesTotal)
        let rate = download.rowsPerSecond
        let what = state == "resetting" ? "resetting, downloading the server's state" : "bootstrapping"
        var text = "\(partition): \(what): \(count(rowsDone))"
        var decile: Int?
        if rowsTotal > 0 {
            let fraction = min(rowsDone / rowsTotal, 1)
            decile = Int(fraction * 10)
            text += " of \(count(rowsTotal)) rows (\(Int(fraction * 100)) %)"
        } else {
            text += " rows"
        }
        text += ", \(mebibytes(bytesDone))"
        if bytesTotal > 0 { text += " of \(mebibytes(bytesTotal))" }
        if rate > 0 { text += ", \(count(rate)) rows/s" }
        return Line(text: text, state: state, decile: decile)
    }

    static func count(_ value: Double) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.maximumFractionDigits = 0
        return formatter.string(from: NSNumber(value: value.rounded())) ?? String(Int(value))
    }

    static func mebibytes(_ bytes: Double) -> String { String(format: "%.1f MiB", bytes / 1_048_576) }
}
