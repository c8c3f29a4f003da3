import Foundation
import Testing
import TetherTestSupport

/// Issue 46's targets, against the release build (`make test` points `TETHER_SERVER_BIN` at it;
/// unset, the debug build next to the tests): 2,000 unauthenticated slow or oversized requests
/// from 20 source addresses (127.0.0.1 … 127.0.0.20) on every route of both listeners
/// (``LoopbackFlood``), while 200 honest devices sync (``HonestFleet``, from 127.0.1.x; half bound
/// before the flood, half binding during it) and an operator calls the admin API every 200 ms
/// (``AdminOperator``, from 127.0.2.1): every device binds at its first attempt, stays bound and
/// syncs, every admin request is answered within 2 s, and the server's resident memory stays
/// under 128 MB. The server runs with its default `[limits]`.
///
/// Like ``ConnectionFloodTests`` it loads a 2-core machine: `make test` runs both suites alone.
@Suite(.serialized) struct HostileFloodTests {
    static let attackers = (1...20).map { "127.0.0.\($0)" }
    static let deviceAddresses = (1...10).map { "127.0.1.\($0)" }
    static let operatorAddress = "127.0.2.1"
    static let memoryLimit = 128 << 20

    @Test(.timeLimit(.minutes(5)))
    func twoThousandSlowOrOversizedRequestsLockNeitherTheDevicesNorTheOperatorOut() async throws {
        try await Self.run("mixed", attacks: LoopbackFlood.Attack.allCases)
    }

    /// One byte per second after a `Content-Length` of 16 MiB, on every route of both listeners.
    @Test(.timeLimit(.minutes(5)))
    func aSlowBodyOnEveryRouteLocksNeitherTheDevicesNorTheOperatorOut() async throws {
        try await Self.run("slow bodies", attacks: [.slowBody])
    }

    /// What one scenario saw.
    struct Figures {
        var idle = 0
        var peak = 0
        var calls: [AdminOperator.Call] = []
        var fleet = HonestFleet.Outcome()
        var flood = LoopbackFlood.Counts()
    }

    static func run(_ name: String, attacks: [LoopbackFlood.Attack]) async throws {
        try await withServer { server in
            guard let pid = server.process?.processIdentifier else { throw ServerFailure("no server process") }
            guard let adminPort = URLComponents(string: server.adminURL)?.port else { throw ServerFailure("admin URL \(server.adminURL)") }
            print("HostileFloodTests[\(name)]: server \(ServerProcess.binary)")
            var plan = LoopbackFlood.Plan(
                connections: 2000, ports: [UInt16(server.port), UInt16(adminPort)], sourceAddresses: attackers, lasting: .seconds(240))
            plan.attacks = attacks
            let figures = try await scenario(server, pid: pid, plan: plan)
            report(name, figures, server: server)
        }
    }

    /// The first half of the devices bind and sync (60 s at most); the flood starts and its first
    /// requests go out (30 s at most); then the other half bind, the operator and a memory sampler
    /// start, and all run until every device synced both rounds or the fleet's deadline.
    private static func scenario(_ server: ServerProcess, pid: Int32, plan: LoopbackFlood.Plan) async throws -> Figures {
        let clock = ContinuousClock()
        var figures = Figures(idle: PlainSocket.residentBytes(of: pid))
        let fleet = HonestFleet(url: server.syncURL, sourceAddresses: deviceAddresses)
        let progress = FleetProgress()
        let stop = StopFlag()
        async let fleetRun: Void = fleet.run(progress: progress, deadline: clock.now.advanced(by: .seconds(180)))
        try await eventually("the first \(fleet.lateFrom) devices synced before the flood", timeout: .seconds(60), pollInterval: .milliseconds(100)) {
            progress.outcome.syncedFirst.count >= fleet.lateFrom
        }
        let flood = try LoopbackFlood(plan)
        let floodDeadline = clock.now.advanced(by: .seconds(30))
        while clock.now < floodDeadline && !Task.isCancelled {
            let counts = flood.counts
            if counts.opened >= plan.connections, counts.delivered + counts.closedByServer + counts.connectFailed >= plan.connections { break }
            try? await Task.sleep(for: .milliseconds(100))
        }
        print("HostileFloodTests: flood up: \(flood.counts)")
        progress.floodIsUp()
        let admin = AdminOperator(url: server.adminURL, token: ServerProcess.adminToken, sourceAddress: operatorAddress)
        async let calls = admin.run(until: stop)
        async let peak = sampleResidentBytes(of: pid, until: stop)
        await fleetRun
        stop.set()
        figures.calls = await calls
        figures.peak = max(figures.idle, await peak)
        await flood.stop()
        figures.flood = flood.counts
        figures.fleet = progress.outcome
        return figures
    }

    /// The highest resident set size of `pid` sampled every 100 ms until `stop`.
    private static func sampleResidentBytes(of pid: Int32, until stop: StopFlag) async -> Int {
        var peak = 0
        for _ in 0..<10_000 where !stop.isSet {
            peak = max(peak, PlainSocket.residentBytes(of: pid))
            try? await Task.sleep(for: .milliseconds(100))
        }
        return max(peak, PlainSocket.residentBytes(of: pid))
    }

    /// The figures, one line each, then the targets.
    private static func report(_ name: String, _ figures: Figures, server: ServerProcess) {
        let label = "HostileFloodTests[\(name)]"
        let devices = 200
        let calls = figures.calls
        let slowest = calls.map(\.seconds).max() ?? 0
        let late = calls.filter { $0.status != 200 || $0.seconds >= 2 }
        let fleet = figures.fleet
        print("\(label): flood: \(figures.flood)")
        print("\(label): peak server RSS \(figures.peak >> 20) MiB (idle \(figures.idle >> 20) MiB, limit \(memoryLimit >> 20) MiB)")
        print("\(label): slowest admin answer \(Int(slowest * 1000)) ms of \(calls.count) requests (\(late.count) unanswered, refused or over 2 s)")
        print("\(label): devices synced \(fleet.synced.count)/\(devices) (bound \(fleet.bound.count), at the first attempt \(fleet.boundAtOnce), first round synced \(fleet.syncedFirst.count), attempts retried \(fleet.retries), lost once bound \(fleet.lostAfterBinding.count))")
        if !fleet.refusals.isEmpty { print("\(label): devices refused before they bound: \(fleet.refusals.sorted().joined(separator: " | "))") }
        let someFailures = fleet.failures.sorted { $0.key < $1.key }.prefix(3).map { "device \($0.key): \($0.value.prefix(300))" }
        #expect(fleet.synced.count == devices, "devices synced \(fleet.synced.count)/\(devices); \(someFailures.joined(separator: "; "))")
        #expect(fleet.lostAfterBinding.isEmpty, "\(fleet.lostAfterBinding.count) devices lost their session once bound")
        // A device's own connection is never refused for what others sent (issue 46, finding 1).
        #expect(fleet.boundAtOnce == devices, "\(devices - fleet.boundAtOnce) devices were refused before they bound (\(fleet.retries) attempts)")
        let someLate = late.prefix(3).map { "\(Int($0.seconds * 1000)) ms, status \($0.status): \($0.failure ?? "")" }
        #expect(!calls.isEmpty && late.isEmpty, "\(late.count) of \(calls.count) admin requests unanswered or over 2 s; \(someLate.joined(separator: "; "))")
        #expect(figures.peak < memoryLimit, "server RSS peaked at \(figures.peak >> 20) MiB")
        #expect(figures.flood.opened >= 2000, "the flood opened \(figures.flood.opened) connections")
        #expect(server.process?.isRunning == true, "the server is still running")
    }
}
