import Foundation
import Testing
import TetherClient

/// The Python package (`python/tether_client`) names what the Swift library names: every field
/// of ``AgentEvent``, every event kind, and the names of ``Tether``'s enums. This test checks
/// that `python/tests/swift_names.json` lists exactly the Swift side; the Python test
/// `python/tests/test_types.py` checks the package against the same file. A field or name added
/// on one side only fails one of the two.
///
/// After an intended change, rewrite the file with
/// `TETHER_UPDATE_PYTHON_NAMES=1 swift test --filter PythonNamesTests` and make the Python side match.
@Suite struct PythonNamesTests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("python/tests/swift_names.json").path

    /// An event with every field set: its JSON has one key per stored property.
    static let fullEvent: AgentEvent = {
        var event = AgentEvent(
            .state, partition: "p", state: "synced", code: 1, name: "n", message: "m", action: "retry", resetID: "r", phase: "done",
            outcome: "o", hook: "h", exitStatus: 0, rows: 1, bytes: 1, skipped: 1, cause: "c", healedChanges: 1, serverVersion: 1,
            tables: ["t": 1], storePath: "/s", backupPath: "/b", table: "t", key: "k", reason: "r")
        event.actionID = 1  // remote-action only; not an argument of the initializer
        return event
    }()

    static func eventFields() throws -> [String] {
        let object = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(fullEvent)) as? [String: Any]
        return (object ?? [:]).keys.sorted()
    }

    static func names() throws -> [String: [String]] {
        [
            "event_fields": try eventFields(),
            "event_kinds": AgentEvent.Kind.allCases.map(\.rawValue),
            "partition_states": Tether.PartitionState.known.map(\.rawValue),
            "error_actions": Tether.ErrorAction.known.map(\.rawValue),
            "reset_strategies": Tether.ResetStrategy.known.map(\.rawValue),
            "reset_phases": Tether.ResetPhase.known.map(\.rawValue),
            "reset_outcomes": Tether.ResetOutcome.known.map(\.rawValue),
        ]
    }

    @Test func everyStoredFieldOfAnEventIsInItsJSON() throws {
        // A property added to AgentEvent but not set above (or not encoded) fails here.
        #expect(try Self.eventFields().count == Mirror(reflecting: Self.fullEvent).children.count)
    }

    @Test func thePythonListsAreTheSwiftOnes() throws {
        let now = try Self.names()
        if ProcessInfo.processInfo.environment["TETHER_UPDATE_PYTHON_NAMES"] == "1" {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try (String(decoding: try encoder.encode(now), as: UTF8.self) + "\n").write(toFile: Self.path, atomically: true, encoding: .utf8)
            return
        }
        let listed = try JSONDecoder().decode([String: [String]].self, from: Data(contentsOf: URL(fileURLWithPath: Self.path)))
        #expect(listed == now, "\(Self.path) differs from the Swift library (if intended: TETHER_UPDATE_PYTHON_NAMES=1 swift test --filter PythonNamesTests)")
    }
}
