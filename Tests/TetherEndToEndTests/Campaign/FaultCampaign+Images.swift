import Foundation
import Synchronization
import TetherControl
import TetherTestSupport

/// The faults of devices that go back in time or are copied (issue "A device restored from an
/// older disk image, or cloned from a golden image, silently loses writes"):
/// - `image-restore`: an agent is stopped (kill -9, a power cut) and its whole state directory
///   put back from an image taken at an earlier checkpoint;
/// - `store-rollback`: the same for one store file only;
/// - `clone`: a second agent starts from a copy of a running agent's state (same token, same
///   machine id, its own directory), writes offline first and then online, and is stopped
///   once its writes are synced.
/// Before the fault the target's writes are held and synced, so every write the model accepted
/// is on the server, and they stay held until the restored device is synced again: the model
/// expects all of them (and the clone's) after convergence, exactly unless a reset discarded
/// (the usual rule). Images are taken at checkpoints (everything
/// synced) with the agent frozen, as a VM snapshot would be.
extension FaultCampaign {
    /// Images kept per agent (the fault picks one of them).
    static let imagesKept = 3

    /// At a checkpoint: an image of every agent's state directory.
    func takeImages() async throws {
        // Numbered by checkpoint (the round count does not move at the first two).
        let number = shared.withLock { state -> Int in
            state.imagesTaken += 1
            return state.imagesTaken
        }
        for (index, agent) in agents.enumerated() where !isDown(agent.name) {
            let path = agent.dir + "/images/\(number)"
            agent.signal(SIGSTOP)
            defer { agent.signal(SIGCONT) }
            try Self.copyContents(of: agent.dir + "/state", to: path)
            let expired = shared.withLock { state -> [String] in
                state.images[index, default: []].append(path)
                let excess = max(0, state.images[index, default: []].count - Self.imagesKept)
                let expired = Array(state.images[index, default: []].prefix(excess))
                state.images[index]?.removeFirst(excess)
                return expired
            }
            for old in expired { try? FileManager.default.removeItem(atPath: old) }
        }
    }

    /// The resets `agent` made this round that did not recover, noted as discarding before its
    /// state goes back to an image: the image has no record of them (nor their backups, as a
    /// restored disk would not), and the round's check must still allow what they discarded
    /// (a soak met it: a discard while client recovery was off, then an image restore).
    func noteResets(of agent: ClusterAgent) async throws {
        let resets = try await agent.json(["resets"])["resets"]?.arrayValue ?? []
        let known = shared.withLock { $0.roundKnownResets[agent.name] ?? [] }
        for reset in resets where !known.contains(reset["id"]?.stringValue ?? "") && reset["outcome"]?.stringValue != "recovered" {
            let partition = reset["partition"]?.stringValue ?? "?"
            shared.withLock { _ = $0.discardedOwners[partition, default: []].insert(agent.name) }
            event("\(agent.name) reset \(reset["id"]?.stringValue ?? "?") of \(partition) (\(reset["outcome"]?.stringValue ?? "?")) noted before its image restore")
        }
    }

    /// `image-restore` (`partition` nil) or `store-rollback` (that partition's store only).
    func rollBack(_ index: Int?, partition: String?) async throws -> Injection {
        guard let index, let image = shared.withLock({ state in state.images[index]?.randomElement(using: &state.faultRandom) }),
            smallDisk?.isFull != true || index != agents.count - 1
        else { return .skipped }
        let agent = agents[index]
        guard try await holdSynced(agent) else { return .skipped }
        defer { release(agent) }
        try await noteResets(of: agent)
        shared.withLock {
            _ = $0.down.insert(agent.name)
            $0.roundServerFaults += 1
        }
        await agent.stop(SIGKILL)
        if let partition {
            let store = "/stores/\(partition).sqlite"
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: agent.dir + "/state" + store + suffix)
                if FileManager.default.fileExists(atPath: image + store + suffix) {
                    try FileManager.default.copyItem(atPath: image + store + suffix, toPath: agent.dir + "/state" + store + suffix)
                }
            }
        } else {
            try Self.copyContents(of: image, to: agent.dir + "/state")
        }
        event("\(agent.name) \(partition.map { "store \($0)" } ?? "state") put back from image \(image)")
        do {
            try await agent.start()
        } catch {
            markUncertain(agent, partition: partition)
            return .lasting(.restartAgent(index))  // a full disk: restarted once there is room
        }
        shared.withLock { _ = $0.down.remove(agent.name) }
        // Until its reset the store is the old one: the application's writes would be made
        // against rows the model does not know it holds. They wait until the device is back in
        // sync (the writes made before the first bind are the end-to-end tests' subject); when
        // it is not within a minute (other faults), this round vouches less for its rows.
        for name in partition.map({ [$0] }) ?? settings.partitions {
            if try await agent.ctl(["wait-synced", name, "--timeout", "60"]).status != 0 {
                markUncertain(agent, partition: partition)
                break
            }
        }
        return .instant
    }

    /// The agent's own rows of `partition` (all partitions when nil) are checked against their
    /// possibilities this round, as after a reset that discarded.
    private func markUncertain(_ agent: ClusterAgent, partition: String?) {
        shared.withLock { state in
            for name in partition.map({ [$0] }) ?? settings.partitions {
                state.discardedOwners[name, default: []].insert(agent.name)
            }
        }
    }

    /// `clone`: a copy of `index`'s state, started as another device with the same token.
    func startClone(of index: Int?, partition: String) async throws -> Injection {
        guard let index, shared.withLock({ $0.clones.count < 2 }) else { return .skipped }
        let original = agents[index]
        guard try await holdSynced(original) else { return .skipped }
        // The copy inherits the original's reset records: only the clone's own count.
        let inherited = Set(try await original.resets().compactMap { $0["id"]?.stringValue })
        let number = shared.withLock { state -> Int in
            state.cloneCount += 1
            state.roundServerFaults += 1
            return state.cloneCount
        }
        let clone = try cluster.agent("k\(number)", partitions: settings.partitions)
        do {
            original.signal(SIGSTOP)
            defer { original.signal(SIGCONT) }
            try Self.copyContents(of: original.dir + "/state", to: clone.dir + "/state")
        }
        release(original)
        try Cluster.write("""
            state_dir = "\(clone.dir)/state"
            log_level = "info"
            control_socket = "\(clone.socket)"
            [server]
            url = "\(cluster.url(instance: index % cluster.ports.count))"
            token_file = "\(clone.dir)/token"
            [reset]
            mode = "recover_unsynced_changes"
            keep_backups = 10000
            \(settings.partitions.map { "[[partition]]\nname = \"\($0)\"" }.joined(separator: "\n"))
            """, to: clone.configPath)
        shared.withLock {
            $0.clones[number] = clone
            $0.cloneResets[number] = inherited
        }
        event("\(clone.name) cloned from \(original.name)")
        // Offline first (written before its first bind), then online.
        try await cloneWrites(clone, partition: partition)
        // While the original stays bound and neither uploads, the clone meets 108; past 90 s
        // (beyond the server's 30 s pings that end a dead connection) it takes a new identity.
        try await clone.start(environment: ["TETHER_FAULT_BOUND_ELSEWHERE_SECONDS": "90"])
        try await cloneWrites(clone, partition: partition)
        return .lasting(.stopClone(number))
    }

    /// Stops a clone once its writes are synced (its resets carried out, as an operator would
    /// carry out one waiting for them); false when that does not happen within four minutes
    /// (a clone held off by 108 takes a new identity after 90 s, then resets and syncs).
    func stopClone(_ number: Int) async throws -> Bool {
        guard let clone = shared.withLock({ $0.clones[number] }) else { return true }
        let deadline = clock.now.advanced(by: .seconds(240))
        var synced = false
        while !synced && clock.now < deadline {
            synced = true
            for partition in settings.partitions {
                if let status = try await clone.status(partition), status["pending_reset"]?.stringValue != nil {
                    _ = try await clone.ctl(["reset", "initiate", partition])
                }
                if try await clone.ctl(["wait-synced", partition, "--timeout", "10"]).status != 0 { synced = false }
            }
        }
        guard synced else { return false }
        let inherited = shared.withLock { $0.cloneResets[number] ?? [] }
        for reset in try await clone.resets() where !inherited.contains(reset["id"]?.stringValue ?? "") {
            let outcome = reset["outcome"]?.stringValue ?? "?"
            stats.withLock { $0.resets["clone-" + outcome, default: 0] += 1 }
            if let cause = reset["cause"]?.stringValue { stats.withLock { $0.causes[cause, default: 0] += 1 } }
            if outcome != "recovered", let partition = reset["partition"]?.stringValue {
                shared.withLock { _ = $0.discardedOwners[partition, default: []].insert(clone.name) }
            }
            event("\(clone.name) reset \(reset["id"]?.stringValue ?? "?"): error \(reset["error_code"].map { "\($0)" } ?? "?") \(outcome)")
        }
        await clone.stop()
        shared.withLock { _ = $0.clones.removeValue(forKey: number) }
        return true
    }

    /// One to three transactions of the clone's own rows, accepted into the model.
    private func cloneWrites(_ clone: ClusterAgent, partition: String) async throws {
        let count = shared.withLock { Int.random(in: 1...3, using: &$0.faultRandom) }
        for _ in 0..<count {
            let operations = shared.withLock { state in
                let seed = settings.seed &+ clone.name.utf8.reduce(UInt64(1000)) { $0 &* 31 &+ UInt64($1) }
                var workload = state.cloneWorkloads[clone.name] ?? CampaignWorkload(owner: clone.name, seed: seed)
                defer { state.cloneWorkloads[clone.name] = workload }
                return workload.nextTransaction(ownRows: state.model.rows(of: partition).filter { $0.key.hasPrefix(clone.name + "-") })
            }
            let statement = "BEGIN;\n" + operations.map(\.sql).joined(separator: "\n") + "\nCOMMIT;"
            let result = try await ChildProcess.run(
                "/usr/bin/sqlite3", ["-bail", "-cmd", ".timeout 5000", clone.store(partition), statement], timeout: .seconds(60))
            guard result.succeeded else { continue }
            shared.withLock { $0.model.accept(operations, in: partition, afterRestore: false, note: self.elapsed + " \(clone.name)") }
            stats.withLock { $0.accepted += 1 }
        }
    }

    /// Holds `agent`'s application writes (once the one in flight ends) and waits until every
    /// partition is synced; false (released) when it is not within 15 s.
    func holdSynced(_ agent: ClusterAgent) async throws -> Bool {
        guard !isDown(agent.name) else { return false }
        shared.withLock { _ = $0.held.insert(agent.name) }
        try await eventually("\(agent.name)'s write in flight ends", timeout: .seconds(60)) {
            !shared.withLock { $0.writing.contains(agent.name) }
        }
        for partition in settings.partitions {
            guard !isDown(agent.name), try await agent.ctl(["wait-synced", partition, "--timeout", "15"]).status == 0 else {
                release(agent)
                return false
            }
        }
        return true
    }

    func release(_ agent: ClusterAgent) { shared.withLock { _ = $0.held.remove(agent.name) } }

    /// Replaces what `target` holds by a copy of what `source` holds (a mount point stays).
    static func copyContents(of source: String, to target: String) throws {
        let manager = FileManager.default
        if manager.fileExists(atPath: target) {
            for name in try manager.contentsOfDirectory(atPath: target) { try manager.removeItem(atPath: target + "/" + name) }
        } else {
            try manager.createDirectory(atPath: target, withIntermediateDirectories: true)
        }
        for name in try manager.contentsOfDirectory(atPath: source) where name != "lost+found" {
            try manager.copyItem(atPath: source + "/" + name, toPath: target + "/" + name)
        }
    }
}
