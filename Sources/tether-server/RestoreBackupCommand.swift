import ArgumentParser
import TetherServer

/// `tether-server restore-backup --from FILE --data-dir DIR` for a stopped server.
struct RestoreBackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore-backup",
        abstract: "Restore a stopped server's data directory from a backup made by `admin backup`.")

    @Option(name: .long, help: "The backup file.")
    var from: String

    @Option(name: .customLong("data-dir"), help: "The server's data_dir.")
    var dataDir: String

    @Flag(help: "What becomes of what the server accepted after the backup was taken (default: heal).")
    var mode: RestoreModeOption = .heal

    func run() throws {
        do {
            let summary = try BackupRestorer.restore(from: from, dataDirectory: dataDir, mode: mode.mode)
            print("restored \(from) into \(dataDir) (\(summary.partitions) partitions)")
            for heal in summary.heals {
                print(
                    "partition \(heal.partition): versions \(heal.restoredTo + 1)...\(heal.lostUntil) were lost; \(heal.mode == .heal ? "devices that hold them give them back as they reset (`admin heal-done` ends it)" : "rolled back: devices that hold them reset without giving them back")")
            }
            if let previous = summary.previousDatabase { print("the previous database was kept as \(previous)") }
        } catch BackupRestorer.Failure.badBackup(let message) {
            throw CommandFailure.usage(message)
        } catch {
            throw CommandFailure.runtime("\(error)")
        }
    }
}
