import Foundation
import Testing
import TetherTestSupport
import TetherAgent

/// The app-specific machine id is the one systemd computes (`systemd-id128 machine-id
/// --app-specific=5b2e91c40d7a4f36a8136ce29451b70f` printed the vector below for that machine id).
@Suite struct MachineIdentityTests {
    @Test func matchesSystemdsAppSpecificID() throws {
        let dir = try TemporaryDirectory(prefix: "tether-machine")
        defer { dir.remove() }
        let path = try dir.write("machine-id", "3d1219c7c4c5404aaa1f6d2a48adfda4\n")
        #expect(try MachineIdentity.current(path: path) == "9205dced22f6442182180c544fa61ea2")
    }

    @Test func theRealMachineAgreesWithSystemd() async throws {
        let tool = "/usr/bin/systemd-id128"
        guard FileManager.default.fileExists(atPath: "/etc/machine-id"), FileManager.default.isExecutableFile(atPath: tool) else { return }
        let result = try await ChildProcess.run(tool, ["machine-id", "--app-specific=5b2e91c40d7a4f36a8136ce29451b70f"])
        guard result.status == 0 else { return }  // no usable machine id here (a container)
        #expect(try MachineIdentity.current(path: "/etc/machine-id") == result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func aMissingOrMalformedFileIsAnError() throws {
        let dir = try TemporaryDirectory(prefix: "tether-machine")
        defer { dir.remove() }
        #expect(throws: MachineIdentity.Failure.self) { try MachineIdentity.current(path: dir.appending("none")) }
        let bad = try dir.write("bad", "not a machine id\n")
        #expect(throws: MachineIdentity.Failure.self) { try MachineIdentity.current(path: bad) }
    }

    /// The state database records it; nil forgets it.
    @Test func theStateDatabaseRecordsIt() throws {
        let dir = try TemporaryDirectory(prefix: "tether-machine")
        defer { dir.remove() }
        let database = try AgentStateDatabase(path: dir.appending("state.sqlite"))
        #expect(try database.recordedMachine() == nil)
        try database.recordMachine("abc")
        try database.recordMachine("def")
        #expect(try database.recordedMachine() == "def")
        try database.recordMachine(nil)
        #expect(try database.recordedMachine() == nil)
    }
}
