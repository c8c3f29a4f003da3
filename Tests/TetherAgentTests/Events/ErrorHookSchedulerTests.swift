import Testing
import TetherAgent
import TetherTestSupport

/// The error hook's scheduling, case by case: one run per partition at a time, repeats of one
/// (partition, code) folded inside the interval, every error counted exactly once.
@Suite struct ErrorHookSchedulerTests {
    let minute = Duration.seconds(60)

    func error(_ partition: String = "p", code: Int? = 211, name: String = "diverging_histories") -> SyncErrorReport {
        SyncErrorReport(partition: partition, store: "/s", code: code, name: name, message: "m", action: code == nil ? "transient" : "client_reset")
    }

    func at(_ seconds: Int) -> Duration { .seconds(seconds) }

    @Test func theFirstErrorRunsAtOnceWithNoRepeats() {
        var scheduler = ErrorHookScheduler()
        #expect(scheduler.errorArrived(error(), interval: minute, at: at(0)) == [.run(error(), repeats: 0)])
        #expect(scheduler.isRunning("p"))
    }

    @Test func repeatsInsideTheIntervalAreFoldedIntoOneLaterRun() {
        var scheduler = ErrorHookScheduler()
        _ = scheduler.errorArrived(error(), interval: minute, at: at(0))
        #expect(scheduler.runFinished(partition: "p", at: at(1)) == [])
        #expect(scheduler.errorArrived(error(), interval: minute, at: at(2)) == [.wake(at: at(60))])
        #expect(scheduler.errorArrived(error(), interval: minute, at: at(3)) == [.wake(at: at(60))])
        var last = error()
        last.message = "the latest"
        #expect(scheduler.errorArrived(last, interval: minute, at: at(4)) == [.wake(at: at(60))])
        #expect(scheduler.timerFired(at: at(59)) == [.wake(at: at(60))], "not before the interval is over")
        #expect(scheduler.timerFired(at: at(60)) == [.run(last, repeats: 2)], "the latest, standing for two more")
    }

    @Test func anErrorAfterTheIntervalRunsAtOnce() {
        var scheduler = ErrorHookScheduler()
        _ = scheduler.errorArrived(error(), interval: minute, at: at(0))
        _ = scheduler.runFinished(partition: "p", at: at(1))
        #expect(scheduler.errorArrived(error(), interval: minute, at: at(61)) == [.run(error(), repeats: 0)])
    }

    @Test func aPartitionNeverHasTwoRunsAtOnce() {
        var scheduler = ErrorHookScheduler()
        _ = scheduler.errorArrived(error(), interval: minute, at: at(0))
        let other = error(code: 206, name: "permission_denied")
        #expect(scheduler.errorArrived(other, interval: minute, at: at(1)) == [], "another code waits for the run")
        #expect(scheduler.heldCount("p") == 1)
        #expect(scheduler.runFinished(partition: "p", at: at(5)) == [.run(other, repeats: 0)])
    }

    @Test func otherPartitionsAndTheConnectionRunBeside() {
        var scheduler = ErrorHookScheduler()
        _ = scheduler.errorArrived(error("a"), interval: minute, at: at(0))
        #expect(scheduler.errorArrived(error("b"), interval: minute, at: at(0)) == [.run(error("b"), repeats: 0)])
        let refused = error("", code: nil, name: "connection_refused")
        #expect(scheduler.errorArrived(refused, interval: minute, at: at(0)) == [.run(refused, repeats: 0)])
    }

    @Test func transportFailuresFoldByTheirKind() {
        var scheduler = ErrorHookScheduler()
        let refused = error("", code: nil, name: "connection_refused")
        let timeout = error("", code: nil, name: "timeout")
        _ = scheduler.errorArrived(refused, interval: minute, at: at(0))
        _ = scheduler.runFinished(partition: "", at: at(1))
        #expect(scheduler.errorArrived(timeout, interval: minute, at: at(2)) == [.run(timeout, repeats: 0)], "another kind is no repeat")
    }

    @Test func heldErrorsOfAPartitionRunOldestFirst() {
        var scheduler = ErrorHookScheduler()
        let first = error(code: 222, name: "client_file_expired")
        let second = error(code: 206, name: "permission_denied")
        _ = scheduler.errorArrived(error(), interval: minute, at: at(0))
        _ = scheduler.errorArrived(first, interval: minute, at: at(1))
        _ = scheduler.errorArrived(second, interval: minute, at: at(2))
        #expect(scheduler.runFinished(partition: "p", at: at(3)) == [.run(first, repeats: 0)])
        #expect(scheduler.runFinished(partition: "p", at: at(4)) == [.run(second, repeats: 0)])
        #expect(scheduler.runFinished(partition: "p", at: at(5)) == [])
    }

    @Test func aZeroIntervalFoldsOnlyWhileARunIsUnderWay() {
        var scheduler = ErrorHookScheduler()
        _ = scheduler.errorArrived(error(), interval: .zero, at: at(0))
        #expect(scheduler.errorArrived(error(), interval: .zero, at: at(0)) == [])
        #expect(scheduler.errorArrived(error(), interval: .zero, at: at(0)) == [])
        #expect(scheduler.runFinished(partition: "p", at: at(1)) == [.run(error(), repeats: 1)])
    }

    /// A flapping link: errors at random times for ten minutes; runs never overlap, never come
    /// closer than the interval for one code, and every error is counted exactly once.
    @Test(arguments: 1...20) func everyErrorIsCountedExactlyOnce(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var scheduler = ErrorHookScheduler()
        let interval = Duration.seconds(30)
        let kinds = [error(code: 211), error(code: 206, name: "permission_denied"), error("", code: nil, name: "connection_refused")]
        var sent = 0
        var counted = 0
        var lastRun: [String: Duration] = [:]
        var running: [String: Duration] = [:]  // partition → when its run ends
        var wakes: [Duration] = []
        func perform(_ actions: [ErrorHookScheduler.Action], now: Duration) {
            for action in actions {
                switch action {
                case .run(let report, let repeats):
                    let key = report.partition + "/" + report.foldingKey
                    #expect(running[report.partition] == nil, "two runs of one partition at once")
                    if let last = lastRun[key] { #expect(now - last >= interval, "runs of one code closer than the interval") }
                    lastRun[key] = now
                    counted += 1 + repeats
                    running[report.partition] = now + .seconds(Int64(random.next() % 20))
                case .wake(let at):
                    wakes.append(at)
                }
            }
        }
        /// Ends the runs and fires the wakes that are due at `now`.
        func advance(to now: Duration) {
            for (partition, end) in running where end <= now {
                running[partition] = nil
                perform(scheduler.runFinished(partition: partition, at: now), now: now)
            }
            if wakes.contains(where: { $0 <= now }) {
                wakes.removeAll { $0 <= now }
                perform(scheduler.timerFired(at: now), now: now)
            }
        }
        for second in 0..<600 {
            let now = Duration.seconds(second)
            advance(to: now)
            if random.next() % 3 == 0 {
                sent += 1
                perform(scheduler.errorArrived(kinds[Int(random.next() % 3)], interval: interval, at: now), now: now)
            }
        }
        // Drain: let every run end and every wake fire.
        var now = Duration.seconds(600)
        while !running.isEmpty || !wakes.isEmpty {
            now += .seconds(1)
            advance(to: now)
        }
        #expect(counted == sent)
        #expect(lastRun.count <= 3)
    }
}
