import Foundation
import Logging
import Synchronization
import Testing
import TetherAgent
import TetherTestSupport

@Suite struct MetricsTextfileServiceTests {
    @Test func writesAtStartThenEveryIntervalAtomically() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tether-textfile-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/tether.prom"
        let clock = ManualClock()
        let renders = Atomic<Int>(0)
        let service = MetricsTextfileService(path: path, clock: clock, logger: Logger(label: "test")) {
            let n = renders.add(1, ordering: .relaxed).newValue
            return "tether_agent_test \(n)\n"
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            try #require(await clock.waitForSleepers(1, timeout: .seconds(30)))
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "tether_agent_test 1\n")
            clock.advance(by: .seconds(14))
            #expect(clock.sleeperCount == 1 && renders.load(ordering: .relaxed) == 1, "not before 15 s")
            clock.advance(by: .seconds(1))
            try await eventually("two renders, one sleeper", timeout: .seconds(30), pollInterval: .milliseconds(5)) {
                renders.load(ordering: .relaxed) == 2 && clock.sleeperCount == 1
            }
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "tether_agent_test 2\n")
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o644, "node_exporter runs as another user")
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["tether.prom"], "no temporary file left")
            group.cancelAll()
        }
    }
}
