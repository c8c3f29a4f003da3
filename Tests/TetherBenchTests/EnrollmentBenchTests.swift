import Foundation
import Synchronization
import Testing
import TetherProtocol

@testable import TetherBench

/// The pure parts of the enrollment phase: the alternation of the bind figure's batches, the
/// device ids and request bodies it sends, its bounded concurrency and the revocation watch.
@Suite struct EnrollmentBenchTests {
    @Test func bindBatchesAlternateWhichKindGoesFirst() {
        #expect(EnrollmentBench.bindOrder(run: 0) == [.device, .user])
        #expect(EnrollmentBench.bindOrder(run: 1) == [.user, .device])
        #expect(EnrollmentBench.bindOrder(run: 4) == [.device, .user])
        let firsts = (0..<6).map { EnrollmentBench.bindOrder(run: $0)[0] }
        #expect(firsts.filter { $0 == .device }.count == 3, "each kind goes first in half the runs")
    }

    @Test func deviceIDsAreRandom32HexDigits() {
        let ids = (0..<1_000).map { _ in EnrollmentBench.randomDeviceID() }
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.count == 32 && $0.allSatisfy { "0123456789abcdef".contains($0) } })
    }

    @Test func theRequestBodyIsAnEnrollmentRequest() throws {
        let body = try EnrollmentBench.requestBody(key: "tek1.k.s", deviceID: String(repeating: "ab", count: 16), name: "bench-revoke-0")
        let request = try JSONDecoder().decode(EnrollmentRequest.self, from: Data(body))
        #expect(request == EnrollmentRequest(key: "tek1.k.s", deviceID: String(repeating: "ab", count: 16), name: "bench-revoke-0", release: TetherVersion.release))
    }

    @Test func concurrentlyRunsEveryIndexOnceWithinTheLimitAndCollectsProblems() async throws {
        let state = Mutex((running: 0, peak: 0, seen: [Int]()))
        let problems = try await EnrollmentBench.concurrently(100, limit: 7) { index in
            state.withLock {
                $0.running += 1
                $0.peak = max($0.peak, $0.running)
                $0.seen.append(index)
            }
            await Task.yield()
            state.withLock { $0.running -= 1 }
            return index.isMultiple(of: 10) ? "index \(index)" : nil
        }
        let (_, peak, seen) = state.withLock { $0 }
        #expect(seen.sorted() == Array(0..<100))
        #expect(peak <= 7)
        #expect(problems.sorted() == (0..<10).map { "index \($0 * 10)" }.sorted())
        #expect(try await EnrollmentBench.concurrently(0, limit: 7) { _ in "never" }.isEmpty)
    }

    @Test func theRevocationWatchKeepsEachInstancesEndingAndProblems() {
        let watch = RevocationWatch()
        #expect(watch.endings.isEmpty && watch.problems.isEmpty && watch.readyConnections.isEmpty)
        watch.ended(0)
        watch.ended(1)
        watch.ended(1)
        #expect(watch.endings.count == 2, "one ending per instance")
        watch.failed("instance 1: the session ended without 203")
        #expect(watch.problems == ["instance 1: the session ended without 203"])
    }
}
