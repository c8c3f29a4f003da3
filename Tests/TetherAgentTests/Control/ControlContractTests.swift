import Foundation
import Testing
import TetherControl

/// The control socket's contract as docs/operations.md and docs/events.md write it, against
/// the Codable types tetherd answers with and tetherctl reads: every documented request
/// round-trips through ``ControlRequest``, every answer's documented keys are exactly the keys
/// its report encodes (null included), and every documented event line decodes and encodes
/// back to itself.
@Suite struct ControlContractTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The rows of the request/answer table: (request cell, answer cell).
    static func table() throws -> [(request: String, answer: String)] {
        let lines = try read("docs/operations.md").split(separator: "\n", omittingEmptySubsequences: false)
        guard let header = lines.firstIndex(where: { $0.hasPrefix("| request | answer `result` |") }) else { return [] }
        return lines[(header + 2)...].prefix { $0.hasPrefix("|") }.map { line in
            // Cells may hold `\|` (an escaped bar, as in `…|null`), which does not end a cell.
            let text = line.replacingOccurrences(of: "\\|", with: "¦")
            let parts = text.split(separator: "|", omittingEmptySubsequences: false).map { $0.replacingOccurrences(of: "¦", with: "|") }
            return (parts[1], parts[2])
        }
    }

    /// The JSON objects written in backticks in `cell`.
    static func code(_ cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// The key names in a documented answer shape such as `{"partition","state":"paused"}`:
    /// quoted names not preceded by a colon (those are example values).
    static func documentedKeys(_ shape: String) -> Set<String> {
        var keys: Set<String> = []
        let characters = Array(shape)
        var i = 0
        while i < characters.count {
            guard characters[i] == "\"" else { i += 1; continue }
            guard let end = characters[(i + 1)...].firstIndex(of: "\"") else { break }
            let previous = characters[..<i].last { !$0.isWhitespace }
            if previous != ":" { keys.insert(String(characters[(i + 1)..<end])) }
            i = end + 1
        }
        return keys
    }

    /// Every key of a JSON document, at any depth.
    static func keys(_ value: JSONValue) -> Set<String> {
        switch value {
        case .object(let object): Set(object.keys).union(object.values.flatMap(keys))
        case .array(let items): Set(items.flatMap(keys))
        default: []
        }
    }

    /// A report of each command with every optional part present.
    static func samples() throws -> [ControlRequest.Command: JSONValue] {
        let partition = PartitionReport(
            name: "store-17", state: "offline", serverVersion: 42, unsyncedChanges: 3,
            lastError: LastErrorReport(code: 211, message: "m", at: "2026-01-01T00:00:00.000Z", cause: nil),
            pendingReset: "4f1c", pendingResetReason: "r",
            download: DownloadReport(
                rowsDone: 1, rowsTotal: 2, bytesDone: 3, bytesTotal: 4, startedAt: "2026-01-01T00:00:00.000Z", rowsPerSecond: 5,
                bytesPerSecond: 6),
            compensatingWrites: 1,
            lastCompensatingWrite: CompensatingWriteReport(table: "orders", key: "o1", reason: "write_rule", at: "2026-01-01T00:00:00.000Z"),
            subscriptionsPending: false)
        let reset = ResetReport(
            id: "4f1c", partition: "store-17", errorCode: 211, errorMessage: "m", mode: "recover", strategy: "recover",
            outcome: "recovered", phase: "done", backupPath: "/b", backupRemoved: false, startedAt: "t", finishedAt: nil,
            fallbackReason: nil, cause: nil, quarantined: false, quarantineReason: nil, recoveredChanges: nil, droppedChanges: nil,
            resultServerVersion: nil, loopRepeats: 0, backupReusedFrom: nil,
            hooks: [HookRunReport(event: "before-reset", result: "exited with status 0", succeeded: true, finishedAt: "t")])
        let subscriptions = SubscriptionsReport(
            partition: "store-17", hasStore: true, held: nil, heldDigest: "whole", wanted: ["orders WHERE total > 1"],
            wantedDigest: "9e20b1c47a03d6f5", changePending: true, runtime: true, configured: nil, configuredDigest: "whole")
        return [
            .status: try JSONValue(encoding: StatusReport(
                agent: AgentReport(release: "0.1.0", syncProtocol: 6, controlProtocol: 2, deviceName: "till", deviceID: "ab"),
                connection: ConnectionReport(serverURL: "wss://s", connected: false, connectedSince: nil), partitions: [partition])),
            .resets: try JSONValue(encoding: ResetsReport(resets: [reset])),
            .resetInitiate: try JSONValue(encoding: ResetInitiatedReport(id: "4f1c", partition: "store-17", outcome: "initiated")),
            .waitSynced: try JSONValue(encoding: WaitSyncedReport(partition: "store-17", serverVersion: 42)),
            .pause: try JSONValue(encoding: PartitionStateReport(partition: "store-17", state: "paused")),
            .resume: try JSONValue(encoding: PartitionStateReport(partition: "store-17", state: "connecting")),
            .logLevel: try JSONValue(encoding: LogLevelReport(logLevel: "debug")),
            .retryNow: try JSONValue(encoding: RetryNowReport(connection: true, partitions: ["store-17"])),
            .metrics: try JSONValue(encoding: MetricsReport(text: "x 1\n")),
            .subscriptions: try JSONValue(encoding: subscriptions),
            .setSubscriptions: try JSONValue(encoding: subscriptions),
            .hello: try JSONValue(encoding: HelloReport(
                release: "0.2.0", protocolVersion: ControlProtocol.version, capabilities: ControlProtocol.capabilities, role: "reader",
                lastEventSeq: 118)),
        ]
    }

    @Test func everyDocumentedRequestRoundTripsAndEveryAnswerHasExactlyTheDocumentedKeys() throws {
        let rows = try Self.table()
        #expect(rows.count >= 10, "the table of docs/operations.md was found")
        let samples = try Self.samples()
        var commands: Set<ControlRequest.Command> = []
        for row in rows {
            let requests = Self.code(row.request).filter { $0.hasPrefix("{") }
            let request = try #require(requests.first, "a request in \(row.request)")
            let decoded = try JSONDecoder().decode(ControlRequest.self, from: Data(request.utf8))
            let again = try JSONDecoder().decode(ControlRequest.self, from: JSONEncoder().encode(decoded))
            #expect(again == decoded)
            #expect(try JSONValue(encoding: decoded) == JSONDecoder().decode(JSONValue.self, from: Data(request.utf8)), "\(request)")
            commands.insert(decoded.command)
            let shape = try #require(Self.code(row.answer).first, "an answer in \(row.answer)")
            let documented = Self.documentedKeys(shape)
            if decoded.command == .events {
                // The event objects' keys are documented in docs/events.md (checked below).
                #expect(documented.isSubset(of: ["events", "follow", "seq", "at", "event"]), "\(shape)")
                continue
            }
            if decoded.command == .diagnostics {
                // Its parts are documented where they come from (status, events, configuration):
                // the top-level keys here.
                let report = DiagnosticsReport(
                    release: "0.1.0", startedAt: "t", uptimeSeconds: 1, status: StatusReport(connection: nil, partitions: []),
                    configuration: [:], events: [], eventsOmitted: 1, note: "n")
                guard case .object(let top) = try JSONValue(encoding: report) else { Issue.record("not an object"); continue }
                #expect(Set(top.keys) == documented, "diagnostics: encoded \(top.keys.sorted()), documented \(documented.sorted())")
                continue
            }
            let sample = try #require(samples[decoded.command])
            #expect(Self.keys(sample) == documented, "\(decoded.command.rawValue): encoded \(Self.keys(sample).sorted()), documented \(documented.sorted())")
        }
        #expect(commands == Set(ControlRequest.Command.allCases), "every command is documented")
    }

    @Test func absentPartsAreNullNotLeftOut() throws {
        let report = PartitionReport(name: "p", state: "synced", serverVersion: 1, unsyncedChanges: 0)
        let value = try JSONValue(encoding: report)
        for key in ["last_error", "pending_reset", "pending_reset_reason", "download"] {
            #expect(value[key] == .null, "\(key)")
        }
        #expect(try value.decode(as: PartitionReport.self) == report)
    }

    @Test func theDocumentedEventLinesRoundTrip() throws {
        let text = try Self.read("docs/events.md")
        let block = try #require(text.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "```").first)
        let lines = block.split(separator: "\n").map(String.init)
        #expect(lines.count >= 3)
        for line in lines {
            let event = try JSONDecoder().decode(AgentEvent.self, from: Data(line.utf8))
            #expect(event.jsonLine == line)
        }
    }

    @Test func theDocumentedFailureRoundTrips() throws {
        let failure = #"{"ok":false,"error":"no partition named nope is configured","code":"unknown-partition","exit_code":1}"#
        #expect(try Self.read("docs/operations.md").contains(failure) && Self.read("docs/control-protocol.md").contains(failure))
        let response = try JSONDecoder().decode(ControlResponse.self, from: Data(failure.utf8))
        #expect(response == .failure("no partition named nope is configured", code: .unknownPartition))
        #expect(try JSONValue(encoding: response) == JSONDecoder().decode(JSONValue.self, from: Data(failure.utf8)))
        // An agent of protocol 1 sent no code: read as none, not as an error.
        let old = #"{"ok":false,"error":"x","exit_code":2}"#
        #expect(try JSONDecoder().decode(ControlResponse.self, from: Data(old.utf8)).code == nil)
    }

    /// Every code of docs/control-protocol.md's table is a ``ControlErrorCode``, with the exit
    /// status written beside it; a code this release does not know is kept as it came.
    @Test func everyDocumentedErrorCodeIsKnown() throws {
        let text = try Self.read("docs/control-protocol.md")
        let rows = text.split(separator: "\n").filter { $0.hasPrefix("| `") && $0.contains("|") }
        var documented: [String: Int32] = [:]
        for row in rows {
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 3, let exit = Int32(cells[2]) else { continue }
            documented[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = exit
        }
        let known: [ControlErrorCode] = [.badRequest, .unknownPartition, .permissionDenied, .protocolTooNew, .timedOut, .unavailable, .failed]
        #expect(Set(documented.keys) == Set(known.map(\.rawValue)), "\(documented)")
        #expect(ControlResponse.failure("x", exitCode: 2).code == .badRequest && documented["bad-request"] == 2)
        #expect(ControlResponse.failure("x", exitCode: 4).code == .permissionDenied && documented["permission-denied"] == 4)
        #expect(ControlResponse.failure("x").code == .failed)
        for code in known { #expect(ControlErrorCode(rawValue: code.rawValue) == code) }
        let future = try JSONDecoder().decode(ControlErrorCode.self, from: Data(#""rate-limited""#.utf8))
        #expect(future == .other("rate-limited") && future.rawValue == "rate-limited")
    }

    @Test func eventsOfAKindThisReleaseDoesNotKnowAreSkipped() throws {
        let result: JSONValue = ["events": [["seq": 1, "at": "t", "event": "from-the-future"], ["seq": 2, "at": "t", "event": "reload"]]]
        #expect(try result.decode(as: EventsReport.self).events.map(\.seq) == [2])
    }
}
