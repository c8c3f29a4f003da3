// Test-only child process for ClientLibraryEndToEndTests (never installed): what the
// `TetherClient` library tells an application running as another user. Prints one JSON object:
// the role `hello` reports (or the error), and what `pause` of partition p gives.
//
//   tether-client-probe SOCKET
import Foundation
import TetherClient

func describe(_ error: TetherClientError) -> String {
    switch error {
    case .agentNotRunning: "agent-not-running"
    case .permissionDenied: "permission-denied"
    case .protocolTooNew: "protocol-too-new"
    case .unknownPartition: "unknown-partition"
    case .timedOut: "timed-out"
    case .refused(let code, _): code.rawValue
    case .unreachable: "unreachable"
    }
}

let tether = TetherClient(socketPath: CommandLine.arguments.dropFirst().first, timeout: .seconds(10))
var outcome: [String: String] = [:]
do throws(TetherClientError) {
    outcome["role"] = try await tether.hello().role
} catch {
    outcome["role"] = describe(error)
}
do throws(TetherClientError) {
    try await tether.pause(partition: "p")
    outcome["pause"] = "paused"
} catch {
    outcome["pause"] = describe(error)
}
let encoder = JSONEncoder()
encoder.outputFormatting = .sortedKeys
print(String(decoding: try encoder.encode(outcome), as: UTF8.self))
