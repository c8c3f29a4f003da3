import Foundation
import Logging
import TetherControl
import TetherProtocol
import TetherSystemd
import TetherSyncClient

extension SyncAgent: ControlHandler {
    package func handle(_ request: ControlRequest) async -> ControlResponse {
        switch request.command {
        case .hello:
            // Answered by the control server, which knows the caller's role.
            return .failure("hello is answered by the control socket", code: .failed)
        case .status:
            for controller in await partitions.controllers() {
                switch await controller.status.state {
                case .offline, .paused, .stopped, .resetPending, .connecting: await controller.recountWithoutSession()
                case .syncing, .synced, .resetting: break  // the session (or the reset) keeps them current
                }
            }
            return .success(report: StatusReport(agent: await agentReport(), connection: await connectionReport(), partitions: await statuses().map(\.report)))
        case .metrics:
            do {
                return .success(report: MetricsReport(text: try await metricsExposition()))
            } catch {
                return .failure("the metrics cannot be read: \(error)")
            }
        case .resets:
            let partition = request.partition.flatMap(PartitionName.init)
            if request.partition != nil && partition == nil { return .failure("illegal partition name", exitCode: 2) }
            do {
                return .success(report: ResetsReport(resets: try stateDatabase.resets(partition: partition).map(\.report)))
            } catch {
                return .failure("\(error)")
            }
        case .resetInitiate:
            guard let (name, controller) = await lookup(request.partition) else { return unknown(request.partition) }
            do {
                guard let id = try await controller.initiate() else { return .failure("no reset to initiate for \(name)") }
                let outcome: String
                do {
                    outcome = try resetOutcome(id)
                } catch {
                    return .failure("reset \(id) of \(name) was initiated, but its outcome cannot be read: \(error); see `tetherctl resets`")
                }
                return .success(report: ResetInitiatedReport(
                    id: id, partition: name.rawValue, outcome: outcome == "manual-pending" ? "initiated" : outcome))
            } catch let error as AgentError {
                return .failure("\(error)")
            } catch {
                return .failure("reset of \(name) could not start: \(error)")
            }
        case .waitSynced:
            guard let (name, controller) = await lookup(request.partition) else { return unknown(request.partition) }
            return await waitSynced(name, controller, timeout: request.timeout ?? 60)
        case .pause:
            guard let (name, controller) = await lookup(request.partition) else { return unknown(request.partition) }
            do { try await controller.pause() } catch { return .failure("cannot pause \(name): \(error)") }
            logger.notice("partition \(name) paused by the operator", metadata: ["tether.partition": .string(name.rawValue)])
            return .success(report: PartitionStateReport(partition: name.rawValue, state: PartitionState.paused.rawValue))
        case .resume:
            guard let (name, controller) = await lookup(request.partition) else { return unknown(request.partition) }
            do { try await controller.resume() } catch { return .failure("cannot resume \(name): \(error)") }
            logger.notice("partition \(name) resumed by the operator", metadata: ["tether.partition": .string(name.rawValue)])
            return .success(report: PartitionStateReport(partition: name.rawValue, state: PartitionState.connecting.rawValue))
        case .events:
            if let raw = request.partition {
                guard let name = PartitionName(raw) else { return .failure("illegal partition name \(raw)", exitCode: 2) }
                guard await partitions.controller(named: name) != nil else { return unknown(raw) }
            }
            if request.follow == true { return .success(report: FollowReport()) }
            return .success(report: EventsReport(events: events.log.recent(partition: request.partition, after: request.after)))
        case .diagnostics:
            return await diagnostics()
        case .subscriptions:
            guard let (name, controller) = await lookup(request.partition) else { return unknown(request.partition) }
            do {
                return .success(report: try await partitions.subscriptionsReport(of: controller))
            } catch {
                return .failure("the subscriptions of \(name) cannot be read: \(error)")
            }
        case .setSubscriptions:
            guard let (name, controller) = await lookup(request.partition) else { return unknown(request.partition) }
            do throws(SubscriptionChangeError) {
                try await partitions.changeSubscriptions(of: controller, to: try PartitionRegistry.requestedSet(request))
            } catch {
                return error.response
            }
            statusSignal.yield()
            do {
                return .success(report: try await partitions.subscriptionsReport(of: controller))
            } catch {
                return .failure("the subscriptions of \(name) were changed, but cannot be read back: \(error); see `tetherctl subscriptions \(name)`")
            }
        case .retryNow:
            return await retryNow(request.partition)
        case .logLevel:
            guard let name = request.level, let level = TetherLogLevel(rawValue: name) else {
                return .failure("unknown log level \(request.level ?? "")", exitCode: 2)
            }
            TetherLogging.level = level
            logger.notice("log level set to \(level.rawValue) by the operator")
            return .success(report: LogLevelReport(logLevel: level.rawValue))
        }
    }

    package nonisolated var eventLog: EventLog? { events.log }

    private func lookup(_ raw: String?) async -> (PartitionName, PartitionController)? {
        guard let raw, let name = PartitionName(raw), let controller = await partitions.controller(named: name) else { return nil }
        return (name, controller)
    }

    /// Ends the connection's backoff, and that of the partition named (or of every partition).
    private func retryNow(_ raw: String?) async -> ControlResponse {
        var controllers: [(PartitionName, PartitionController)] = []
        if raw != nil {
            guard let found = await lookup(raw) else { return unknown(raw) }
            controllers = [found]
        } else {
            for controller in await partitions.controllers() { controllers.append((await controller.settings.name, controller)) }
        }
        let reconnects = await connection.retryNow()
        var retried: [String] = []
        for (name, controller) in controllers where await controller.retryNow() { retried.append(name.rawValue) }
        logger.notice("retry now by the operator: \(reconnects ? "reconnecting" : "the connection was not backing off"); binding again: \(retried.isEmpty ? "none" : retried.joined(separator: ", "))")
        return .success(report: RetryNowReport(connection: reconnects, partitions: retried))
    }

    private func unknown(_ raw: String?) -> ControlResponse {
        .failure("no partition named \(raw ?? "(none)") is configured", exitCode: 1, code: .unknownPartition)
    }

    /// The reset's outcome as recorded now (`in-progress` until it is recorded as ended).
    private func resetOutcome(_ id: String) throws -> String {
        try stateDatabase.resets().first { $0.id == id }?.outcome.rawValue ?? "in-progress"
    }

    /// Waits until every local change is uploaded and the store holds the server's latest
    /// version; a ping round trip first makes sure what the server had sent has arrived.
    private func waitSynced(_ name: PartitionName, _ controller: PartitionController, timeout: Double) async -> ControlResponse {
        let deadline = ContinuousClock.now + .seconds(timeout)
        // Counted from the store itself first: a commit an application made just before asking
        // may not have reached the partition's status yet (its notification is on the way).
        await controller.recount()
        var confirmed = false
        while ContinuousClock.now < deadline {
            if Task.isCancelled { return .failure("the daemon is stopping", code: .unavailable) }
            let seen = controller.statusChanges.generation
            let status = await controller.status
            if status.isSynced {
                if confirmed {
                    return .success(report: WaitSyncedReport(partition: name.rawValue, serverVersion: status.serverVersion))
                }
                // A round trip to the server confirms it; a failed ping is not an answer but
                // a reason to look again, until the deadline (which then says so).
                if let connection = await connection.current, (try? await connection.ping()) != nil {
                    confirmed = true
                    continue
                }
            } else {
                confirmed = false
            }
            // Woken by the next change of the partition's status (or the deadline).
            await controller.statusChanges.wait(after: seen, timeout: deadline - ContinuousClock.now)
        }
        let status = await controller.status
        return .failure(
            "\(name) not synced after \(timeout) s: state \(status.state.rawValue), \(status.unsyncedChanges) unsynced changes, version \(status.serverVersion) of \(status.latestServerVersion)",
            exitCode: 1, code: .timedOut)
    }
}
