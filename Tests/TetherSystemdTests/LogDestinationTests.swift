import Testing
import TetherSystemd

/// One row of the destination decision table.
struct DestinationCase: Sendable, CustomTestStringConvertible {
    var name: String
    var requested: LogDestination = .auto
    var variables: [String: String] = [:]
    var stderr: FileIdentity? = FileIdentity(device: 64769, inode: 123456)
    var parent: Int32 = 4242
    var existing: Set<String> = []
    var expected: LogDestination

    var testDescription: String { name }

    var environment: LogEnvironment {
        let existing = existing
        return LogEnvironment(
            variables: variables, stderrIdentity: stderr, parentProcessID: parent,
            pathExists: { existing.contains($0) })
    }
}

private let socket = LogEnvironment.journalSocketPath
private let systemd = LogEnvironment.systemdRunPath

@Test(arguments: [
    DestinationCase(name: "terminal, no journal", expected: .stderr),
    DestinationCase(name: "JOURNAL_STREAM matches stderr", variables: ["JOURNAL_STREAM": "64769:123456"], expected: .journal),
    DestinationCase(
        name: "JOURNAL_STREAM matches even without socket check", variables: ["JOURNAL_STREAM": "64769:123456"],
        existing: [], expected: .journal),
    DestinationCase(
        name: "JOURNAL_STREAM names another file (stderr redirected)", variables: ["JOURNAL_STREAM": "64769:999"],
        expected: .stderr),
    DestinationCase(
        name: "JOURNAL_STREAM garbage", variables: ["JOURNAL_STREAM": "not:numbers"], expected: .stderr),
    DestinationCase(name: "JOURNAL_STREAM but stderr closed", variables: ["JOURNAL_STREAM": "64769:123456"], stderr: nil, expected: .stderr),
    DestinationCase(name: "socket present, run by hand", existing: [socket, systemd], expected: .stderr),
    DestinationCase(
        name: "socket present and INVOCATION_ID", variables: ["INVOCATION_ID": "a8f5c0e1b2"], existing: [socket],
        expected: .journal),
    DestinationCase(
        name: "INVOCATION_ID but no socket", variables: ["INVOCATION_ID": "a8f5c0e1b2"], expected: .stderr),
    DestinationCase(name: "socket present, parent is systemd", parent: 1, existing: [socket, systemd], expected: .journal),
    DestinationCase(name: "parent PID 1 is not systemd", parent: 1, existing: [socket], expected: .stderr),
    DestinationCase(
        name: "JOURNAL_STREAM mismatch but service with socket", variables: ["JOURNAL_STREAM": "1:2", "INVOCATION_ID": "x"],
        existing: [socket], expected: .journal),
    DestinationCase(name: "forced journal on a terminal", requested: .journal, expected: .journal),
    DestinationCase(
        name: "forced stderr under systemd", requested: .stderr,
        variables: ["JOURNAL_STREAM": "64769:123456", "INVOCATION_ID": "x"], existing: [socket, systemd],
        expected: .stderr),
])
func destinationDecision(_ row: DestinationCase) {
    let decision = LogDestinationDecision.decide(row.requested, environment: row.environment)
    #expect(decision.destination == row.expected, "\(row.name): \(decision)")
    #expect(!decision.reason.isEmpty)
}

@Test func journalStreamParsing() {
    #expect(FileIdentity(journalStream: "8:17") == FileIdentity(device: 8, inode: 17))
    #expect(FileIdentity(journalStream: "8:") == nil)
    #expect(FileIdentity(journalStream: "8:17:1") == nil)
    #expect(FileIdentity(journalStream: "-1:17") == nil)
}

@Test func currentEnvironmentSeesThisProcessStderr() {
    let environment = LogEnvironment.current()
    #expect(environment.stderrIdentity == FileIdentity(fileDescriptor: 2))
    #expect(environment.pathExists("/") && !environment.pathExists("/nonexistent/tether"))
}

@Test func destinationNamesParse() throws {
    #expect(try LogDestination(parsing: "Journal") == .journal)
    #expect(throws: LogDestinationError(text: "syslog")) { try LogDestination(parsing: "syslog") }
    #expect(LogDestinationError(text: "syslog").description.contains("auto journal stderr"))
}
