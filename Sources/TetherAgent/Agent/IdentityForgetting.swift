import Foundation
import Logging
import TetherControl
import TetherProtocol
import TetherStore

/// Forgetting the stores' sync identities, so that each store binds as a new device and keeps
/// its rows and unsynced changes (the state download replays them on top): before the first
/// bind on a machine whose machine id changed, and by `tetherd --forget-identities` before a
/// device is imaged (docs/client-reset.md, "Restored and cloned devices").
package enum IdentityForgetting {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Forgets the identity of every configured partition's store that exists; the names of
    /// those that had one. Throws when a store cannot be changed: it must not bind with an
    /// identity another machine may hold.
    @discardableResult
    package static func forget(_ partitions: [PartitionSettings]) throws(Failure) -> [PartitionName] {
        var forgotten: [PartitionName] = []
        for partition in partitions where FileManager.default.fileExists(atPath: partition.storePath) {
            do {
                if try PartitionStore.forgetIdentity(ofStoreAt: partition.storePath) { forgotten.append(partition.name) }
            } catch {
                throw Failure(description: "cannot forget the sync identity of the store \(partition.storePath): \(error)")
            }
        }
        return forgotten
    }

    /// At the agent's start, before any bind: when the app-specific machine id differs from the
    /// one recorded at the last start, the stores' identities are forgotten (journal entry with
    /// the lineage `MESSAGE_ID`, cause `machine-changed`; an `identity` event per store), and
    /// only then is the new id recorded — a crash in between forgets again, harmlessly.
    static func checkMachine(
        configuration: AgentConfiguration, stateDatabase: AgentStateDatabase, logger: Logger, events: AgentEvents, metrics: AgentMetrics
    ) throws {
        let current: String
        do {
            current = try MachineIdentity.current()
        } catch {
            logger.warning(
                "\(error): a state directory copied from another machine is then caught only by the server's lineage check (docs/client-reset.md)")
            return
        }
        let recorded = try stateDatabase.recordedMachine()
        guard recorded != current else { return }
        if recorded != nil {
            let forgotten = try adopt(current, configuration: configuration, stateDatabase: stateDatabase)
            let cause = LineageCause.machineChanged
            for name in forgotten {
                logger.warning(
                    "\(cause.prefix): the machine id differs from the one tetherd last ran with (a cloned or re-imaged machine); the store of \(name) forgets its sync identity and binds as a new device, keeping its unsynced changes",
                    metadata: [
                        "message_id": .string(TetherMessageID.storeLineage.rawValue), "tether.partition": .string(name.rawValue),
                        "tether.cause": .string(cause.rawValue),
                    ])
                events.emit(AgentEvent(.identity, partition: name.rawValue, message: "sync identity forgotten", cause: cause.rawValue))
                metrics.identityForgotten(name)
            }
            if forgotten.isEmpty { logger.notice("the machine id changed since the last start; no store had a sync identity to forget") }
            return
        }
        try stateDatabase.recordMachine(current)
    }

    /// Makes `machine` the recorded one, forgetting the stores' identities first when another
    /// was recorded (the device id goes with it); the stores that had one. What
    /// ``checkMachine(configuration:stateDatabase:logger:events:metrics:)`` does at start, and
    /// `tetherctl enroll` before it reads the device id on a machine tetherd has not started on yet.
    @discardableResult
    package static func adopt(_ machine: String, configuration: AgentConfiguration, stateDatabase: AgentStateDatabase) throws -> [PartitionName] {
        let recorded = try stateDatabase.recordedMachine()
        guard recorded != machine else { return [] }
        let forgotten = recorded == nil ? [] : try forget(configuration.partitions)
        try stateDatabase.recordMachine(machine)
        return forgotten
    }
}
