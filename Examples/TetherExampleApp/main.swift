// An application on a Tether device, as small as it gets: it writes an order into its
// partition's store with SQLite every few seconds, as a till would, and prints every sync
// error, every client reset (with the store's copy from before) and every batch of other
// devices' changes as they happen. It remembers the last event it handled in the store's
// directory, so a restart of the app — or of tetherd — misses nothing.
//
//   swift run tether-example-app --store /var/lib/tether/stores/store-17.sqlite --partition store-17
//
// (docs/app-integration.md explains each call.)
import Foundation
import GRDB
import TetherClient

struct Options {
    var store = ""
    var partition = ""
    var socket: String?
    var interval: Duration = .seconds(5)

    init(_ arguments: [String]) {
        var rest = arguments.dropFirst()
        while let flag = rest.popFirst() {
            switch flag {
            case "--store": store = rest.popFirst() ?? ""
            case "--partition": partition = rest.popFirst() ?? ""
            case "--socket": socket = rest.popFirst()
            case "--interval": interval = .seconds(Int(rest.popFirst() ?? "") ?? 5)
            default: break
            }
        }
    }
}

/// One line, written at once (also into a pipe or a journal): each event shows as it happens.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let options = Options(CommandLine.arguments)
guard !options.store.isEmpty, !options.partition.isEmpty else {
    FileHandle.standardError.write(Data("usage: tether-example-app --store PATH --partition NAME [--socket PATH] [--interval SECONDS]\n".utf8))
    exit(2)
}
let tether = TetherClient(socketPath: options.socket)
let bookmark = options.store + ".last-event"

do throws(TetherClientError) {
    let hello = try await tether.hello()
    say("tetherd \(hello.release), control protocol \(hello.protocolVersion), role \(hello.role)")
} catch {
    say("tetherd: \(error)\(error.isTransient ? " (will retry)" : "")")
    if !error.isTransient { exit(1) }
}

try await withThrowingTaskGroup(of: Void.self) { group in
    // The till: one order every interval, through SQLite, as any application writes.
    group.addTask {
        let store = try DatabaseQueue(path: options.store)
        var number = 0
        while true {
            number += 1
            let id = "\(ProcessInfo.processInfo.hostName)-\(Int(Date().timeIntervalSince1970))-\(number)"
            let total = number
            try await store.write { db in
                try db.execute(sql: "INSERT INTO orders (id, customer, total) VALUES (?, ?, ?)", arguments: [id, "walk-in", total])
            }
            try await Task.sleep(for: options.interval)
        }
    }
    // What the app hears, from where it stopped last time.
    group.addTask {
        let after = (try? String(contentsOfFile: bookmark, encoding: .utf8)).flatMap { UInt64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        for try await event in tether.events(after: after, partition: options.partition) {
            switch event.event {
            case .syncError:
                say("sync error \(event.code.map(String.init) ?? "-") \(event.name ?? ""): \(event.message ?? "") → \(event.action ?? "")")
            case .resetOutcome:
                if let notice = ClientResetNotice(event) {
                    say("client reset \(notice.resetID): \(notice.outcome); before: \(notice.before), after: \(notice.after)")
                }
            case .changesApplied:
                let tables = (event.tables ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                say("other devices' changes: \(tables) (server version \(event.serverVersion ?? 0))")
            case .dropped:
                say("missed events: \(event.message ?? "")")
            default:
                break
            }
            if event.seq > 0 { try? String(event.seq).write(toFile: bookmark, atomically: true, encoding: .utf8) }
        }
    }
    try await group.next()
    group.cancelAll()
}
