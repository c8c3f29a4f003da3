import Foundation
import Synchronization
import TetherControl
import TetherTestSupport

/// How long and with which seed a campaign runs: `TETHER_CAMPAIGN_SEED` and
/// `TETHER_CAMPAIGN_DURATION` (seconds; `make soak DURATION=…` sets it) or the CI defaults
/// (a random seed, 90 s: about two minutes with both storages' convergence).
struct CampaignSettings: Sendable {
    var seed: UInt64
    var duration: Duration
    var roundLength: Duration = .seconds(8)
    var agentNames = ["a0", "a1", "a2"]
    var partitions = ["p0", "p1", "p2"]
    /// The partition whose rows `s-1` … `s-<contestedKeys>` every agent writes (same-row conflicts).
    var contestedPartition = "p0"
    var contestedKeys = 6
    /// Each agent's reset mode (the last partition's is swapped by reloads).
    var modes = ["recover_unsynced_changes", "discard_unsynced_changes", "recover_or_discard_unsynced_changes"]

    /// The server's storage; PostgreSQL runs `instances` server instances sharing it, the
    /// agents spread over them, and the fault `kill-instance` instead of `kill-server`.
    var storage: ClusterSettings.Storage = .sqlite
    var instances = 1
    /// Faults whose weight replaces the usual one (`TETHER_CAMPAIGN_WEIGHTS`, e.g.
    /// `restore-heal=30,terminate-sync=10`: a soak aimed at one kind of fault; 0 leaves it out).
    var weights: [String: Int] = [:]
    /// Faults in effect in every round, from its start to its end, beside the random ones
    /// (`TETHER_CAMPAIGN_FAULTS`, e.g. `flood`: a run aimed at one fault; `make soak FAULTS=…`).
    var forced: [String] = []

    /// One seed for both storages' campaigns of a run, when none is given.
    static let randomSeed = UInt64.random(in: 1...999_999_999)

    /// The settings of the campaign on `storage`: `TETHER_CAMPAIGN_STORAGE` = `sqlite`,
    /// `postgresql` or `both` (default) says which storages share the duration; with both,
    /// PostgreSQL (two instances) gets 30 % of it. Zero seconds: this storage does not run.
    static func fromEnvironment(storage: ClusterSettings.Storage) -> CampaignSettings {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["TETHER_CAMPAIGN_SEED"].flatMap { UInt64($0) } ?? randomSeed
        let seconds = environment["TETHER_CAMPAIGN_DURATION"].flatMap { Int($0) } ?? 90
        let postgresShare: Double = switch environment["TETHER_CAMPAIGN_STORAGE"] ?? "both" {
        case "sqlite": 0
        case "postgresql": 1
        default: 0.3
        }
        let share = storage == .postgresql ? postgresShare : 1 - postgresShare
        var settings = CampaignSettings(seed: seed, duration: .seconds(Int((Double(seconds) * share).rounded())))
        settings.storage = storage
        settings.instances = storage == .postgresql ? 2 : 1
        for pair in (environment["TETHER_CAMPAIGN_WEIGHTS"] ?? "").split(separator: ",") {
            let parts = pair.split(separator: "=")
            if parts.count == 2, let weight = Int(parts[1]) { settings.weights[String(parts[0])] = weight }
        }
        settings.forced = (environment["TETHER_CAMPAIGN_FAULTS"] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
        return settings
    }
}

/// A randomised fault campaign (issue "Fault and bad-input campaign"): one `tether-server`,
/// several `tetherd` agents each behind its own ``LoopbackProxy``, applications writing with
/// `sqlite3`, and random faults. It runs in rounds: writes and faults for a while, then the
/// faults stop, everything must converge, and the stores are checked against
/// ``CampaignModel`` — see `docs/reliability.md`.
final class FaultCampaign: Sendable {
    let settings: CampaignSettings
    let cluster: Cluster
    let agents: [ClusterAgent]
    let proxies: [LoopbackProxy]
    /// The state dir of the last agent is a small tmpfs, for disk-full faults (nil: not possible here).
    let smallDisk: SmallDisk?
    let shared: Mutex<Shared>
    let stats: Mutex<CampaignStats>
    let clock = ContinuousClock()
    let started = ContinuousClock.now

    struct Shared: Sendable {
        var model: CampaignModel
        /// Per partition: restores begun and restores that have returned.
        var restoresBegun: [String: Int] = [:]
        var restoresSettled: [String: Int] = [:]
        var workloads: [CampaignWorkload]
        var faultRandom: SeededRandom
        /// Processes the campaign killed or froze and has not restarted yet (``serverName(_:)``
        /// or an agent's name).
        var down: Set<String> = []
        /// Server-side faults in effect (terminate-sync, recovery-off, revoke).
        var serverFaults: Set<String> = []
        /// Per partition: the snapshot it was last restored to (for forward and repeated restores).
        var lastRestore: [String: String] = [:]
        /// Faults of the current round that give devices a reason to reset (restores,
        /// terminate-sync, recovery-off, revoke): the bound on resets per device grows with them.
        var roundServerFaults = 0
        var logLevels: [String: String] = [:]
        var partitionModes: [String: String] = [:]
        /// The current round's faults, with when they happened.
        var timeline: [String] = []
        /// Write failures by message (ids stripped), for the detail report.
        var refusals: [String: Int] = [:]
        /// Whether this round injects only faults that never discard.
        var lossless = false
        /// Per agent index: images of its state directory taken at checkpoints, oldest first.
        var images: [Int: [String]] = [:]
        var imagesTaken = 0
        /// Agents whose application writes are held (before an image restore or a clone), and
        /// agents with a write in flight.
        var held: Set<String> = []
        var writing: Set<String> = []
        /// Clones running, by number, and how many were made.
        var clones: [Int: ClusterAgent] = [:]
        var cloneCount = 0
        var cloneWorkloads: [String: CampaignWorkload] = [:]
        /// Per clone: the reset records it inherited from the original (not its own).
        var cloneResets: [Int: Set<String>] = [:]
        /// Per partition: owners outside `agents` (clones) whose reset this round did not recover.
        var discardedOwners: [String: Set<String>] = [:]
        /// The flood in effect (``FaultCampaign/startFlood(instances:)``).
        var flood: LoopbackFlood?
        /// Per agent name and partition: the filter of its subscription to `orders` (fault `subscribe`).
        var subscriptions: [String: [String: String]] = [:]
        /// The server's backup taken at the last checkpoint (one SQLite server), with the
        /// snapshots the model knew then (``FaultCampaign/restoreHeal(partition:)``).
        var serverBackup: (path: String, snapshots: [String: [(id: String, rows: [String: CampaignModel.Row])]])?
        /// Whether a partition was restored since `serverBackup` was taken (the backup is then of
        /// another line of history than the devices hold).
        var restoredSinceBackup = false
        /// Agents revoked by `revoke-device` and not yet enrolled again, and those of them whose
        /// device is removed already (``FaultCampaign/readmit(_:admin:)``).
        var revokedDevices: Set<String> = []
        var removedDevices: Set<String> = []
        /// Remote actions asked for this round, by id: the device's name and the kind
        /// (``FaultCampaign/checkRemoteActions()``).
        var remoteActions: [Int64: (device: String, kind: String)] = [:]
        /// Per agent: the ids of its resets when the round began (``FaultCampaign/noteResets(of:)``).
        var roundKnownResets: [String: Set<String>] = [:]
        /// Per partition: how many of the model's snapshots existed at its last restore. Those
        /// taken since, and the one it was restored to, are on its current line of history.
        var lineStart: [String: Int] = [:]

        /// A restore of `partition` happened: snapshots taken before it may be of another line.
        mutating func noteRestore(_ partition: String) {
            restoredSinceBackup = true
            lineStart[partition] = model.snapshots(of: partition).count
        }
    }

    init(settings: CampaignSettings) async throws {
        for name in settings.forced where Fault(rawValue: name) == nil {
            throw TestSupportError("TETHER_CAMPAIGN_FAULTS names no fault \(name) (faults: \(Fault.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        self.settings = settings
        // Ready files for partitions of 20 rows and more: the campaign's bootstraps and resets take
        // both paths, files (built, brought up to date, resumed after cuts) and rows.
        cluster = try await Cluster(ClusterSettings(
            serverConfig: "[ready_files]\nmin_rows = 20\n[subscriptions]\nqueryable = [\"orders.total\", \"orders.customer\"]\n", storage: settings.storage, instances: settings.instances,
            directoryPrefix: "tether-campaign"))
        var agents: [ClusterAgent] = []
        var proxies: [LoopbackProxy] = []
        for (index, name) in settings.agentNames.enumerated() {
            // Agents spread over the instances.
            proxies.append(try LoopbackProxy(targetPort: cluster.ports[index % cluster.ports.count]))
            agents.append(try cluster.agent(name, partitions: settings.partitions))
        }
        self.agents = agents
        self.proxies = proxies
        var unavailable: String?
        do {
            smallDisk = try await SmallDisk.mount(at: agents[agents.count - 1].dir + "/state", megabytes: 48)
        } catch {
            smallDisk = nil
            unavailable = "\(error)"
        }
        var stats = CampaignStats(seed: settings.seed)
        stats.storage = settings.storage == .sqlite ? "sqlite" : "postgresql/\(settings.instances)"
        if let unavailable { stats.unavailable["disk-full"] = unavailable }
        self.stats = Mutex(stats)
        shared = Mutex(Shared(
            model: CampaignModel(partitions: settings.partitions),
            workloads: settings.agentNames.enumerated().map { CampaignWorkload(owner: $1, seed: settings.seed &+ UInt64($0) &+ 1) },
            faultRandom: SeededRandom(seed: settings.seed)))
        for index in agents.indices { try writeConfig(index) }
    }

    /// The agents enroll (issue 48): a reusable key beside each, no token file, and enrolled
    /// devices granted every partition at run time (the `revoke` fault revokes that grant).
    func enrollAgents() async throws {
        let key = try await cluster.admin(["enroll-key", "create", "--reusable", "--note", "campaign"])
        try await cluster.admin(["grant", "device:*", "*", "readwrite"])
        for agent in agents {
            try Cluster.write(key + "\n", to: agent.dir + "/enroll.key", mode: 0o600)
            try FileManager.default.removeItem(atPath: agent.dir + "/token")
        }
    }

    /// Runs rounds until the duration is over; returns what happened.
    func run() async throws -> CampaignStats {
        try await enrollAgents()
        for agent in agents { try await agent.start() }
        try await checkpoint()
        let end = clock.now.advanced(by: settings.duration)
        while clock.now < end {
            try await round()
        }
        return stats.withLock { $0 }
    }

    func tearDown() async {
        await stopFlood()
        for proxy in proxies { proxy.stop() }
        for agent in agents { await agent.stop(SIGKILL) }
        smallDisk?.unmount()
        await cluster.shutdown()
    }

    /// Writes and faults for one round length, then heal, converge, check.
    private func round() async throws {
        let knownResets = try await resetIDs()
        shared.withLock {
            $0.timeline = []
            $0.roundServerFaults = 0
            $0.roundKnownResets = knownResets
        }
        let end = clock.now.advanced(by: settings.roundLength)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in agents.indices {
                group.addTask { try await self.write(index, until: end) }
            }
            group.addTask { try await self.injectFaults(until: end) }
            try await group.waitForAll()
        }
        try await checkpoint(knownResets: knownResets)
        stats.withLock { $0.rounds += 1 }
    }

    /// One agent's application: random transactions on its own rows, and on the contested
    /// partition sometimes on the rows every agent writes, until `end`. The first one writes
    /// the contested row `s-1` (``CampaignWorkload/openingContested()``).
    private func write(_ index: Int, until end: ContinuousClock.Instant) async throws {
        let agent = agents[index]
        var opening = true
        while clock.now < end {
            let held = shared.withLock { state in
                if state.held.contains(agent.name) { return true }
                state.writing.insert(agent.name)
                return false
            }
            if held {
                try await Task.sleep(for: .milliseconds(50))
                continue
            }
            defer { shared.withLock { _ = $0.writing.remove(agent.name) } }
            let (partition, operations, contested, begun, settled, pause) = shared.withLock { state in
                let partition = opening ? settings.contestedPartition : state.workloads[index].pick(settings.partitions)
                let contested = opening || (partition == settings.contestedPartition && state.workloads[index].contests())
                let own = state.model.rows(of: partition).filter { $0.key.hasPrefix(agent.name + "-") }
                let operations =
                    opening
                    ? state.workloads[index].openingContested()
                    : contested
                        ? state.workloads[index].nextContested(keys: settings.contestedKeys)
                        : state.workloads[index].nextTransaction(ownRows: own)
                return (partition, operations, contested, state.restoresBegun[partition, default: 0],
                        state.restoresSettled[partition, default: 0], state.workloads[index].pause())
            }
            opening = false
            let statement = contested
                ? CampaignModel.Operation.contestedScript(operations)
                : "BEGIN;\n" + operations.map(\.sql).joined(separator: "\n") + "\nCOMMIT;"
            let result = try await ChildProcess.run(
                "/usr/bin/sqlite3", ["-bail", "-cmd", ".timeout 5000", agent.store(partition), statement], timeout: .seconds(60))
            if result.succeeded {
                shared.withLock { state in
                    if contested {
                        let steps = CampaignModel.Operation.contestedSteps(operations, output: result.standardOutput)
                        state.model.acceptContested(steps, by: agent.name, in: partition, note: self.elapsed)
                        return
                    }
                    let afterRestore = begun == settled && state.restoresBegun[partition, default: 0] == begun
                    state.model.accept(operations, in: partition, afterRestore: afterRestore, note: self.elapsed)
                }
                stats.withLock { $0.accepted += 1 }
            } else {
                let reason = result.standardError.split(separator: "\n").first.map(String.init) ?? "exit \(result.status)"
                shared.withLock { $0.refusals[reason.filter { !$0.isNumber }, default: 0] += 1 }
                stats.withLock { $0.rejected += 1 }
            }
            try await Task.sleep(for: .milliseconds(pause))
        }
    }

    /// The agent's configuration: its proxy as the server, its reset mode, many backups kept.
    func writeConfig(_ index: Int) throws {
        let agent = agents[index]
        let (level, p1Mode, subscriptions) = shared.withLock {
            ($0.logLevels[agent.name] ?? "info", $0.partitionModes[agent.name] ?? settings.modes[index], $0.subscriptions[agent.name] ?? [:])
        }
        let partitions = settings.partitions.map { name in
            "[[partition]]\nname = \"\(name)\"" + (name == settings.partitions.last ? "\n[partition.reset]\nmode = \"\(p1Mode)\"" : "")
                + (subscriptions[name].map { "\n[[partition.subscription]]\ntable = \"orders\"\nwhere = \"\($0)\"" } ?? "")
        }
        try Cluster.write("""
            state_dir = "\(agent.dir)/state"
            log_level = "\(level)"
            control_socket = "\(agent.socket)"
            [device]
            name = "\(agent.name)"
            [server]
            url = "ws://127.0.0.1:\(proxies[index].port)/sync"
            token_file = "\(agent.dir)/token"
            enrollment_key_file = "\(agent.dir)/enroll.key"
            [reset]
            mode = "\(settings.modes[index])"
            keep_backups = 10000
            \(partitions.joined(separator: "\n"))
            """, to: agent.configPath)
    }

    /// Seconds since the campaign started, for timelines.
    var elapsed: String { {
        let time = (clock.now - started).components
        return String(format: "%.2fs", Double(time.seconds) + Double(time.attoseconds) / 1e18)
    }() }

    /// Notes an event on the round's timeline (printed with violations).
    func event(_ text: String) {
        let line = "\(elapsed) \(text)"
        shared.withLock { $0.timeline.append(line) }
    }

    func isDown(_ name: String) -> Bool { shared.withLock { $0.down.contains(name) } }

    /// A server instance's name in `down`: `server`, `server-2`, …
    func serverName(_ instance: Int) -> String { instance == 0 ? "server" : "server-\(instance + 1)" }

    /// The server instances running (neither killed nor frozen).
    var upInstances: [Int] { cluster.ports.indices.filter { !isDown(serverName($0)) } }

    func resetIDs() async throws -> [String: Set<String>] {
        var ids: [String: Set<String>] = [:]
        for agent in agents where !isDown(agent.name) {
            let resets = try await agent.json(["resets"])["resets"]?.arrayValue ?? []
            ids[agent.name] = Set(resets.compactMap { $0["id"]?.stringValue })
        }
        return ids
    }

    var refusals: [String: Int] { shared.withLock { $0.refusals } }
}
