import Foundation
import Logging
import TetherProtocol
import TetherSyncClient

/// The partitions by name, and the context every partition's controller calls back into: the
/// running configuration, session ids, the token, status changes, the connection-level errors
/// (handed to ``AgentConnection``), the reset's fetcher and healer over the current connection.
actor PartitionRegistry {
    private(set) var configuration: AgentConfiguration
    private var byName: [PartitionName: PartitionController] = [:]
    private var sessionCounter: SessionID = 0
    /// Which credential binds offer when the server refuses the token file's (``CredentialFallback``).
    var credentialFallback = CredentialFallback()
    /// The token file's credential the fallback's list was read against (another: it starts over).
    var credentialFallbackBase: String?
    /// The token file's credential the server refused with every earlier one, until the next
    /// attempt's credential check takes it (``takeCredentialRefusal()``).
    var credentialRefusedEverywhere: String?
    /// The state database's device id, read once (``CredentialHistory`` keeps only its credentials).
    var cachedDeviceID: String?
    nonisolated let stateDatabase: AgentStateDatabase
    nonisolated let logger: Logger
    nonisolated let events: AgentEvents
    /// The agent's connection: controllers' connection-level errors, the resets' sessions.
    nonisolated let connection: AgentConnection
    /// Signals the agent's status task and device reports (does not wait).
    private nonisolated let onStatusChange: @Sendable () -> Void

    init(
        configuration: AgentConfiguration, stateDatabase: AgentStateDatabase, logger: Logger, events: AgentEvents,
        connection: AgentConnection, onStatusChange: @escaping @Sendable () -> Void
    ) {
        self.configuration = configuration
        self.stateDatabase = stateDatabase
        self.logger = logger
        self.events = events
        self.connection = connection
        self.onStatusChange = onStatusChange
    }

    /// Creates the partitions' controllers (paused ones stay paused across restarts).
    func startControllers() {
        for settings in configuration.partitions where byName[settings.name] == nil {
            byName[settings.name] = makeController(settings)
        }
    }

    /// A controller for `settings`: a partition paused by `tetherctl pause` stays paused, and its
    /// last error is shown again after a restart.
    private func makeController(_ settings: PartitionSettings, at moment: String = "start") -> PartitionController {
        let persisted: PartitionStatusRow
        do {
            persisted = try stateDatabase.status(of: settings.name)
        } catch {
            // Syncing a partition an operator paused is the lesser harm than never syncing it.
            logger.error(
                "cannot read partition \(settings.name)'s status (pause, last error) from the state database \(stateDatabase.path): \(error); it starts unpaused",
                metadata: ["tether.partition": .string(settings.name.rawValue)])
            persisted = PartitionStatusRow(name: settings.name)
        }
        return PartitionController(settings: inForce(settings, at: moment), context: self, persisted: persisted)
    }

    /// The partition named `name`, when one is configured.
    func controller(named name: PartitionName) -> PartitionController? { byName[name] }

    /// Every partition's controller, by name.
    func controllers() -> [PartitionController] { byName.keys.sorted().compactMap { byName[$0] } }

    /// Every partition's status, by name.
    func statuses() async -> [PartitionStatus] {
        var result: [PartitionStatus] = []
        for controller in controllers() { result.append(await controller.status) }
        return result
    }

    /// No partition wedged in one event for `limit`.
    func partitionsMakingProgress(limit: Duration) async -> Bool {
        for controller in byName.values where !(await controller.isMakingProgress(limit: limit)) { return false }
        return true
    }

    /// The partitions' stores open now (for the ``IdleStoreReleaser``).
    func openStores() async -> [any IdleReleasable] {
        var stores: [any IdleReleasable] = []
        for controller in byName.values {
            if let store = await controller.store { stores.append(store) }
        }
        return stores
    }

    /// Takes a reloaded configuration: partitions removed (or moved to another store) leave,
    /// kept ones take their new settings, new ones start (on the current connection at once).
    /// Returns the configuration it replaced.
    func reload(_ next: AgentConfiguration) async -> AgentConfiguration {
        let old = configuration
        configuration = next
        for settings in old.partitions {
            let kept = next.partition(named: settings.name)
            if kept == nil || kept?.storePath != settings.storePath, let controller = byName.removeValue(forKey: settings.name) {
                await controller.remove()
                logger.notice("partition \(settings.name) removed", metadata: ["tether.partition": .string(settings.name.rawValue)])
            }
        }
        for settings in next.partitions {
            if let controller = byName[settings.name] {
                await controller.apply(inForce(settings, at: "reload"))
            } else {
                let controller = makeController(settings, at: "reload")
                byName[settings.name] = controller
                await connection.partitionAdded(controller)
                logger.notice("partition \(settings.name) added", metadata: ["tether.partition": .string(settings.name.rawValue)])
            }
        }
        return old
    }
}

extension PartitionRegistry: AgentContext {
    func configuration() async -> AgentConfiguration { configuration }

    func nextSessionID() async -> SessionID {
        sessionCounter &+= 1
        return sessionCounter
    }

    nonisolated func statusChanged() { onStatusChange() }

    func connectionFailed(_ error: SyncError) async {
        await connection.connectionFailed(error, serverURL: configuration.server.url)
    }

    nonisolated var fetcher: any ServerStateFetcher { AgentStateFetcher(partitions: self) }

    nonisolated var healer: any HealContributor { AgentHealContributor(partitions: self) }

    nonisolated var resetLoopLimits: ResetLoopGuard.Limits { FaultInjection.resetLoopLimits }
}
