import Foundation
import Synchronization
import TetherControl
import TetherTestSupport

/// `restore-heal` (issue "Heal from the fleet"): the server goes back in time and the devices
/// give back what it lost. Every running agent's application writes are held until it is
/// synced, so every write the model accepted is on the server and in every running device's
/// view; then either
/// - `admin restore PARTITION SNAPSHOT --heal`, or
/// - with one SQLite server and a backup taken at a checkpoint: the server stopped, its
///   database file replaced by that backup and the server started again, with no command —
///   the devices find it (`[history] devices_ahead`, default heal).
/// The writes are released at once. The model does **not** count it as a restore: after the
/// devices reconnect and reset, every row must be exactly as last written (a reset that
/// discarded still vouches less for its owner's rows, as always).
extension FaultCampaign {
    /// At a checkpoint (everything synced and checked), with one SQLite server: a backup of the
    /// server and the snapshots the model knows then, for the database swap.
    func takeServerBackup() async throws {
        guard settings.storage == .sqlite, settings.instances == 1, upInstances == [0] else { return }
        let path = cluster.dir.appending("server-backup.sqlite")
        try await cluster.admin(["backup", "--out", path])
        shared.withLock {
            $0.serverBackup = (path, $0.model.snapshotLists)
            $0.restoredSinceBackup = false
        }
    }

    func restoreHeal(partition: String) async throws -> Injection {
        let admin = upInstances.first
        guard let admin, upInstances.count == cluster.ports.count else { return .skipped }
        var held: [ClusterAgent] = []
        defer { for agent in held { release(agent) } }
        for agent in agents where !isDown(agent.name) {
            guard try await holdSynced(agent) else { return .skipped }
            held.append(agent)
        }
        guard !held.isEmpty else { return .skipped }
        // Only along the current line of history: a backup or a snapshot from before a restore
        // went back past it holds another line than the devices do, and is a rollback.
        let (swap, snapshot) = shared.withLock { state -> (Bool, String?) in
            let swap = state.serverBackup != nil && !state.restoredSinceBackup && state.faultRandom.chance(0.5)
            let snapshots = state.model.snapshots(of: partition)
            var line = Array(snapshots[min(state.lineStart[partition] ?? 0, snapshots.count)...])
            if let last = state.lastRestore[partition], state.lineStart[partition] != nil { line.append(last) }
            return (swap, line.randomElement(using: &state.faultRandom))
        }
        if swap, let backup = shared.withLock({ $0.serverBackup }) {
            shared.withLock {
                $0.roundServerFaults += 1
                _ = $0.down.insert(serverName(0))
            }
            await cluster.stopServer(SIGTERM)
            let database = cluster.serverDataDirectory() + "/server.sqlite"
            for suffix in ["-wal", "-shm", ""] { try? FileManager.default.removeItem(atPath: database + suffix) }
            try FileManager.default.copyItem(atPath: backup.path, toPath: database)
            try await cluster.startServer()
            shared.withLock { state in
                _ = state.down.remove(serverName(0))
                // The snapshots taken since the backup are gone with the database.
                // No restore since the backup (checked above): the lines of history the campaign
                // knows are the backup's.
                state.model.snapshotLists = backup.snapshots
                // The remote actions asked for this round came after the backup (taken once the
                // last round's were answered): they are gone with the database, as an operator's
                // would be, and the ids restart (a device's answer to an old one is matched by its
                // connection, which the restart closed).
                state.remoteActions = [:]
            }
            event("server database put back from the last checkpoint's backup (devices heal it)")
            return .instant
        }
        guard let snapshot else { return .skipped }
        shared.withLock {
            $0.roundServerFaults += 1
            $0.lastRestore[partition] = snapshot
            $0.noteRestore(partition)
        }
        try await cluster.admin(["restore", partition, snapshot, "--heal"], instance: admin)
        event("restored \(partition) to \(snapshot) with --heal")
        return .instant
    }
}
