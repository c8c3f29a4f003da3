import Foundation
import TetherBench

/// `tether-bench [--quick] [--results FILE] [--history DIR] [--commit C] [--only connections,fan-file,scale,subscriptions,bulk,capture,latency,wire,fanout,idle,enrollment,ledger,actions,first-device] [--scales N,…]
/// [--devices N] [--enrollments N] [--ledger-entries N] [--storage sqlite|postgresql] [--instances 1|2]`:
/// runs the benchmark against the release builds next to it, prints a table and writes JSON.
/// Exits 0 whatever the figures are (it is a benchmark, not a test); 2 on a usage error.
@main
struct TetherBenchCommand {
    static func main() async {
        var quick = ProcessInfo.processInfo.environment["QUICK"].map { !$0.isEmpty && $0 != "0" } ?? false
        var results = "bench/results.json"
        var history: String?
        var commit: String?
        var only: Set<String> = []
        var scales: [Int]?
        var devices: Int?
        var enrollments: Int?
        var ledgerEntries: Int?
        var fanOutSessions: Int?
        var storage = BenchOptions.Storage.sqlite
        var instances = 1
        var arguments = CommandLine.arguments.dropFirst().makeIterator()
        while let argument = arguments.next() {
            switch argument {
            case "--quick": quick = true
            case "--results":
                guard let value = arguments.next() else { usage("--results needs a file") }
                results = value
            case "--history":
                guard let value = arguments.next() else { usage("--history needs a directory") }
                history = value
            case "--commit":
                guard let value = arguments.next() else { usage("--commit needs a commit") }
                commit = value
            case "--only":
                guard let value = arguments.next() else { usage("--only needs a list") }
                only = Set(value.split(separator: ",").map(String.init))
            case "--scales":
                guard let value = arguments.next() else { usage("--scales needs a list of row counts") }
                scales = value.split(separator: ",").compactMap { Int($0) }
            case "--devices":
                guard let value = arguments.next(), let count = Int(value), count > 0 else { usage("--devices needs a number of devices") }
                devices = count
            case "--enrollments":
                guard let value = arguments.next(), let count = Int(value), count > 0 else { usage("--enrollments needs a number of devices") }
                enrollments = count
            case "--ledger-entries":
                guard let value = arguments.next(), let count = Int(value), count > 0 else { usage("--ledger-entries needs a number of entries") }
                ledgerEntries = count
            case "--fan-out-sessions":
                guard let value = arguments.next(), let count = Int(value), count > 0 else { usage("--fan-out-sessions needs a number of sessions") }
                fanOutSessions = count
            case "--storage":
                guard let value = arguments.next(), let parsed = BenchOptions.Storage(rawValue: value) else {
                    usage("--storage needs sqlite or postgresql")
                }
                storage = parsed
            case "--instances":
                guard let value = arguments.next(), let count = Int(value), (1...2).contains(count) else { usage("--instances needs 1 or 2") }
                instances = count
            case "--help", "-h":
                print("usage: tether-bench [--quick] [--results FILE] [--history DIR] [--commit C] [--only connections,fan-file,scale,subscriptions,bulk,capture,latency,wire,fanout,idle,enrollment,ledger,actions,first-device] [--scales 10000,100000] [--devices 5000] [--enrollments 1000] [--ledger-entries 100000] [--fan-out-sessions 200] [--storage sqlite|postgresql] [--instances 1|2]")
                return
            default: usage("unknown argument \(argument)")
            }
        }
        var options = BenchOptions(quick: quick, resultsPath: results)
        if let scales { options.scales = scales }
        if let devices { options.connectedDevices = devices }
        if let enrollments { options.enrollments = enrollments }
        if let ledgerEntries { options.ledgerEntries = ledgerEntries }
        if let fanOutSessions { options.fanOutSessions = fanOutSessions }
        if instances > 1 && storage != .postgresql { usage("--instances 2 needs --storage postgresql") }
        options.storage = storage
        options.instances = instances
        var report = await Benchmark(options: options, only: only).run()
        report.commit = commit
        print("\n" + report.table)
        print("total: \(BenchReport.number(report.totalSeconds)) s (\(report.mode))")
        do {
            try report.write(to: results)
            print("wrote \(results)")
        } catch {
            print("tether-bench: cannot write \(results): \(error)")
        }
        if let history {
            let kept = BenchHistory(directory: history)
            print("\nChange against the previous run of each figure (\(report.mode)):")
            for line in BenchHistory.changes(of: report, against: kept.previousRuns()) { print("- " + line) }
            do {
                print("kept in \(try kept.record(report))")
            } catch {
                print("tether-bench: cannot keep the run in \(history): \(error)")
            }
        }
    }

    static func usage(_ problem: String) -> Never {
        FileHandle.standardError.write(Data("tether-bench: \(problem)\n".utf8))
        exit(2)
    }
}
