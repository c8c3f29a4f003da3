import Foundation
import Synchronization
import TetherTestSupport

extension FaultCampaign {
    enum Fault: String, CaseIterable, Sendable {
        case killAgent = "kill-agent", killServer = "kill-server", cut, stall, restore
        /// A restore to a snapshot newer than the one the partition was last restored to (the
        /// history between them is gone: issue 22), and a restore to that same snapshot again.
        case restoreForward = "restore-forward", restoreAgain = "restore-again"
        case terminateSync = "terminate-sync", recoveryOff = "recovery-off", revoke, reload
        case diskFull = "disk-full", pause
        /// SIGSTOP of an agent or of the server (undone by SIGCONT), and a route that loses one
        /// direction only (held, as TCP would keep retransmitting it).
        case freezeAgent = "freeze-agent", freezeServer = "freeze-server", oneWayCut = "one-way-cut"
        /// With several server instances (PostgreSQL): kill -9 of one instance (restarted later);
        /// it replaces `kill-server`, and `freeze-server` freezes one instance.
        case killInstance = "kill-instance"
        /// A device put back to an older image of its state directory, of one store file only,
        /// and a copy of a device running beside it (``FaultCampaign/rollBack(_:partition:)``).
        case imageRestore = "image-restore", storeRollback = "store-rollback", clone
        /// A restore the devices heal: `admin restore --heal`, or the database file put back
        /// under a stopped server (``FaultCampaign/restoreHeal(partition:)``).
        case restoreHeal = "restore-heal"
        /// Slow and oversized unauthenticated clients on every route of one server instance or
        /// of all (``FaultCampaign/startFlood(instances:)``), until undone.
        case flood
        /// An enrolled agent's credential rotated (`admin device rotate`), and an agent revoked
        /// (`admin device revoke`) until it is removed and enrolls again
        /// (``FaultCampaign/injectIdentity(_:agentIndex:anyAgent:admin:)``).
        case rotate, revokeDevice = "revoke-device"
        /// An operator's remote action for one device or every device (``FaultCampaign/injectRemoteAction(anyAgent:admin:)``).
        case remoteAction = "remote-action"
        /// A partition of one agent subscribed (issue 51) to its own rows and the contested ones,
        /// by a reload, until undone by another: the other owners' rows leave its store and
        /// come back; its writes stay inside, so none is a compensating write.
        case subscribe

        /// Whether the fault applies to a cluster of `instances` server instances.
        func applies(instances: Int) -> Bool {
            switch self {
            case .killServer: instances == 1
            case .killInstance: instances > 1
            default: true
            }
        }

        /// Faults after which a reset may legitimately discard unsynced changes (a heal's
        /// resets too: a discard-mode device drops what it wrote after the writes were released).
        var mayDiscard: Bool { isRestore || self == .recoveryOff || self == .revoke || self == .restoreHeal }

        var isRestore: Bool { self == .restore || self == .restoreForward || self == .restoreAgain }

        var weight: Int {
            switch self {
            case .killAgent, .cut, .reload: 10
            case .killServer, .killInstance, .stall, .restore, .pause: 6
            case .restoreForward, .restoreAgain: 4
            case .freezeAgent, .freezeServer, .oneWayCut: 5
            case .diskFull: 5
            case .terminateSync, .recoveryOff: 4
            case .revoke: 3
            case .imageRestore: 4
            case .storeRollback, .clone: 3
            case .restoreHeal: 4
            case .flood: 3
            case .rotate: 4
            case .revokeDevice: 3
            case .remoteAction: 4
            case .subscribe: 4
            }
        }

        /// How long a lasting fault lasts, in milliseconds (if the round does not end first): a
        /// flood long enough for the server's request deadlines to matter.
        var lasts: ClosedRange<Int> { self == .flood ? 2000...8000 : 300...3000 }
    }

    /// How a fault with a duration ends; all of them run when the round's faults stop.
    enum Undo: Sendable {
        case restartServer(Int), freeDisk, restartAgent(Int), pass(Int), enableSync, recoveryOn, grant, resume(Int, String)
        case thawServer(Int), thawAgent(Int)
        /// Stops a clone once its writes are synced.
        case stopClone(Int)
        /// Stops the flood and closes its connections.
        case stopFlood
        /// Removes a revoked agent's device and restarts the agent, which enrolls again.
        case readmit(Int)
        /// Drops the agent's subscription of the partition by a reload, once the agent is up.
        case unsubscribe(Int, String)

        /// Healing order: the server and disk first, then agents, then server-side settings.
        var order: Int {
            switch self {
            case .thawServer, .thawAgent, .stopFlood: 0
            case .restartServer: 0
            case .freeDisk: 1
            case .restartAgent: 2
            case .pass: 3
            case .enableSync, .recoveryOn, .grant, .readmit: 4
            case .resume, .stopClone, .unsubscribe: 5
            }
        }

        var needsServer: Bool {
            switch self {
            case .enableSync, .recoveryOn, .grant, .readmit: true
            default: false
            }
        }
    }

    /// Random faults until `end`, each undone after a random while; everything undone at the end.
    /// Half the rounds inject only faults that never discard, so the model can vouch for every row.
    func injectFaults(until end: ContinuousClock.Instant) async throws {
        let lossless = shared.withLock { state in
            state.lossless = state.faultRandom.chance(0.5)
            return state.lossless
        }
        let faults = Fault.allCases.filter { (!lossless || !$0.mayDiscard) && $0.applies(instances: settings.instances) }
            .map { ($0, settings.weights[$0.rawValue] ?? $0.weight) }.filter { $0.1 > 0 }
        var scheduled: [(at: ContinuousClock.Instant, undo: Undo)] = []
        // Forced faults (`TETHER_CAMPAIGN_FAULTS`): in effect from the round's start to its end.
        for fault in settings.forced.compactMap(Fault.init(rawValue:))
        where (!lossless || !fault.mayDiscard) && fault.applies(instances: settings.instances) {
            let injection = try await inject(fault)
            if case .skipped = injection { continue }
            if case .lasting(let undo) = injection { scheduled.append((end, undo)) }
            stats.withLock { $0.count(fault: fault.rawValue) }
            event("\(fault.rawValue) \(injection) (forced)")
        }
        while clock.now < end {
            let (gap, fault, duration) = shared.withLock { state in
                let gap = Int.random(in: 200...1200, using: &state.faultRandom)
                let fault = state.faultRandom.weighted(faults)
                return (gap, fault, Int.random(in: fault.lasts, using: &state.faultRandom))
            }
            try await Task.sleep(for: .milliseconds(gap))
            var waiting: [(at: ContinuousClock.Instant, undo: Undo)] = []
            // In healing order, as at the end of a round: a server thawed before a clone is
            // stopped (stopping it waits for its writes to sync, which a frozen server holds off).
            for item in scheduled.sorted(by: { $0.undo.order < $1.undo.order }) {
                if item.at <= clock.now, try await perform(item.undo) { continue }
                waiting.append(item)
            }
            scheduled = waiting
            let injection = try await inject(fault)
            switch injection {
            case .skipped: continue
            case .instant: break
            case .lasting(let undo): scheduled.append((clock.now.advanced(by: .milliseconds(duration)), undo))
            }
            stats.withLock { $0.count(fault: fault.rawValue) }
            event("\(fault.rawValue) \(injection)")
        }
        for item in scheduled.sorted(by: { $0.undo.order < $1.undo.order }) {
            guard try await perform(item.undo) else {
                throw TestSupportError("cannot undo \(item.undo) at the end of a round (seed \(settings.seed))")
            }
        }
    }

    enum Injection {
        /// The fault does not apply now (its target is down, or it is already in effect).
        case skipped
        case instant
        case lasting(Undo)
    }

    /// Injects `fault` if it applies now.
    private func inject(_ fault: Fault) async throws -> Injection {
        let up = upInstances
        let serverUp = !up.isEmpty
        let upAgents = agents.indices.filter { !isDown(agents[$0].name) }
        let (agentIndex, partition, anyAgent, instance) = shared.withLock { state in
            (upAgents.randomElement(using: &state.faultRandom), settings.partitions.randomElement(using: &state.faultRandom)!,
             Int.random(in: 0..<agents.count, using: &state.faultRandom), up.randomElement(using: &state.faultRandom))
        }
        // Admin commands go to a running instance (any: they share the storage).
        let admin = up.first ?? 0
        switch fault {
        case .killAgent:
            guard let index = agentIndex else { return .skipped }
            shared.withLock { _ = $0.down.insert(agents[index].name) }
            await agents[index].stop(SIGKILL)
            return .lasting(.restartAgent(index))
        case .killServer, .killInstance:
            guard let instance else { return .skipped }
            shared.withLock { _ = $0.down.insert(serverName(instance)) }
            await cluster.killServer(instance: instance)
            return .lasting(.restartServer(instance))
        case .cut, .stall, .oneWayCut:
            guard proxies[anyAgent].mode == .pass else { return .skipped }
            let upstream = shared.withLock { Bool.random(using: &$0.faultRandom) }
            proxies[anyAgent].mode = switch fault {
            case .cut: .drop
            case .stall: .stall
            default: upstream ? .stallUpstream : .stallDownstream
            }
            return .lasting(.pass(anyAgent))
        case .freezeAgent:
            // A frozen agent is "down" for the campaign: no tetherctl command is sent to it.
            guard let index = agentIndex else { return .skipped }
            shared.withLock { _ = $0.down.insert(agents[index].name) }
            agents[index].signal(SIGSTOP)
            return .lasting(.thawAgent(index))
        case .freezeServer:
            guard let instance else { return .skipped }
            shared.withLock { _ = $0.down.insert(serverName(instance)) }
            cluster.signalServer(SIGSTOP, instance: instance)
            return .lasting(.thawServer(instance))
        case .restore, .restoreForward, .restoreAgain:
            let snapshots = shared.withLock { $0.model.snapshots(of: partition) }
            let last = shared.withLock { $0.lastRestore[partition] }
            let candidates: [String] = switch fault {
            case .restoreForward: last.flatMap { snapshots.firstIndex(of: $0) }.map { Array(snapshots[($0 + 1)...]) } ?? []
            case .restoreAgain: last.map { [$0] } ?? []
            default: snapshots
            }
            guard serverUp, let snapshot = shared.withLock({ candidates.randomElement(using: &$0.faultRandom) }) else { return .skipped }
            let begun = shared.withLock { state in
                state.lastRestore[partition] = snapshot
                state.noteRestore(partition)
                state.roundServerFaults += 1
                state.restoresBegun[partition, default: 0] += 1
                state.model.restore(partition, to: snapshot)
                return state.restoresBegun[partition, default: 0]
            }
            try await cluster.admin(["restore", partition, snapshot, "--rollback"], instance: admin)
            event("restored \(partition) to \(snapshot)")
            shared.withLock { $0.restoresSettled[partition] = begun }
            return .instant
        case .terminateSync, .recoveryOff, .revoke:
            guard serverUp, !shared.withLock({ $0.serverFaults.contains(fault.rawValue) }) else { return .skipped }
            shared.withLock {
                _ = $0.serverFaults.insert(fault.rawValue)
                $0.roundServerFaults += 1
            }
            switch fault {
            case .terminateSync:
                try await cluster.admin(["terminate-sync"], instance: admin)
                return .lasting(.enableSync)
            case .recoveryOff:
                try await cluster.admin(["recovery", "off"], instance: admin)
                return .lasting(.recoveryOn)
            default:
                try await cluster.admin(["revoke", "device:*", "*"], instance: admin)
                return .lasting(.grant)
            }
        case .rotate, .revokeDevice:
            guard serverUp else { return .skipped }
            return try await injectIdentity(fault, agentIndex: agentIndex, anyAgent: anyAgent, admin: admin)
        case .remoteAction:
            guard serverUp else { return .skipped }
            return try await injectRemoteAction(anyAgent: anyAgent, admin: admin)
        case .reload:
            guard let index = agentIndex else { return .skipped }
            let name = agents[index].name
            shared.withLock { state in
                state.logLevels[name] = state.logLevels[name] == "detail" ? "info" : "detail"
                let current = state.partitionModes[name] ?? settings.modes[index]
                state.partitionModes[name] =
                    current == "recover_unsynced_changes" ? "recover_or_discard_unsynced_changes" : "recover_unsynced_changes"
            }
            try writeConfig(index)
            agents[index].signal(SIGHUP)
            return .instant
        case .diskFull:
            guard let disk = smallDisk, !disk.isFull else { return .skipped }
            disk.fill()
            return .lasting(.freeDisk)
        case .pause:
            guard let index = agentIndex, try await agents[index].ctl(["pause", partition]).status == 0 else { return .skipped }
            return .lasting(.resume(index, partition))
        case .subscribe:
            guard let index = agentIndex else { return .skipped }
            let owner = agents[index].name
            let prefix = CampaignModel.contestedPrefix
            // `total` (never NULL here) is queryable: the state and changes are read through the
            // filter index, kept by every write of the round and by its faults.
            let filter = "total >= -1000000000.0 AND ((id >= '\(owner)-' AND id < '\(owner).') OR (id >= '\(prefix)' AND id < '\(prefix.dropLast()).'))"
            let subscribed = shared.withLock { state -> Bool in
                guard state.subscriptions[owner]?[partition] == nil else { return false }
                state.subscriptions[owner, default: [:]][partition] = filter
                return true
            }
            guard subscribed else { return .skipped }
            try writeConfig(index)
            agents[index].signal(SIGHUP)
            return .lasting(.unsubscribe(index, partition))
        case .imageRestore, .storeRollback:
            // In a lossless round only agents whose resets recover (a discard-mode reset drops
            // the writes made between the restart and the reset: they are in its backup).
            let lossless = shared.withLock { $0.lossless }
            let target = agentIndex.flatMap { lossless && settings.modes[$0] == "discard_unsynced_changes" ? nil : $0 }
            return try await rollBack(target, partition: fault == .storeRollback ? partition : nil)
        case .clone:
            return try await startClone(of: agentIndex, partition: partition)
        case .restoreHeal:
            return try await restoreHeal(partition: partition)
        case .flood:
            return try startFlood(instances: up)
        }
    }

    /// Undoes a fault; `false` when it cannot be done yet (the server is down, or an agent
    /// cannot start while its disk is full) and must be retried.
    private func perform(_ undo: Undo) async throws -> Bool {
        let admin = upInstances.first
        if undo.needsServer && admin == nil { return false }
        // A clone syncs through any instance: it is stopped once every instance is up again.
        if case .stopClone = undo, upInstances.count < cluster.ports.count { return false }
        event("undo \(undo)")
        switch undo {
        case .thawServer(let instance):
            cluster.signalServer(SIGCONT, instance: instance)
            shared.withLock { _ = $0.down.remove(serverName(instance)) }
        case .thawAgent(let index):
            agents[index].signal(SIGCONT)
            shared.withLock { _ = $0.down.remove(agents[index].name) }
        case .restartServer(let instance):
            try await cluster.startServer(instance: instance)
            shared.withLock { _ = $0.down.remove(serverName(instance)) }
        case .freeDisk:
            smallDisk?.free()
        case .restartAgent(let index):
            do {
                try await agents[index].start()
            } catch where index == agents.count - 1 && smallDisk?.isFull == true {
                return false  // a daemon cannot start on a full disk; it is restarted once there is room
            }
            shared.withLock { _ = $0.down.remove(agents[index].name) }
        case .pass(let index):
            proxies[index].mode = .pass
        case .enableSync, .recoveryOn, .grant:
            switch undo {
            case .enableSync: try await cluster.admin(["enable-sync"], instance: admin ?? 0)
            case .recoveryOn: try await cluster.admin(["recovery", "on"], instance: admin ?? 0)
            default: try await cluster.admin(["grant", "device:*", "*", "readwrite"], instance: admin ?? 0)
            }
            let name = undo.faultName
            shared.withLock { _ = $0.serverFaults.remove(name) }
        case .stopClone(let number):
            return try await stopClone(number)
        case .stopFlood:
            await stopFlood()
        case .readmit(let index):
            return try await readmit(index, admin: admin ?? 0)
        case .unsubscribe(let index, let partition):
            // Once the agent is up: a frozen one is thawed, not restarted, and would never read
            // a configuration written meanwhile (seed 82998787: its store kept the subset).
            guard !isDown(agents[index].name) else { return false }
            _ = shared.withLock { $0.subscriptions[agents[index].name]?.removeValue(forKey: partition) }
            try writeConfig(index)
            agents[index].signal(SIGHUP)
        case .resume(let index, let partition):
            // A pause outlives a restart: resume once the agent is back.
            guard !isDown(agents[index].name) else { return false }
            // Refused while the pause cannot be recorded (a full disk): try again later.
            guard try await agents[index].ctl(["resume", partition]).status == 0 else { return false }
        }
        return true
    }
}

extension FaultCampaign.Undo {
    var faultName: String {
        switch self {
        case .enableSync: FaultCampaign.Fault.terminateSync.rawValue
        case .recoveryOn: FaultCampaign.Fault.recoveryOff.rawValue
        case .grant: FaultCampaign.Fault.revoke.rawValue
        default: ""
        }
    }
}
