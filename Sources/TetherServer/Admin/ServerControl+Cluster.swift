import Foundation
import Logging
import TetherProtocol

/// How one instance catches up with what other instances sharing its database did: events
/// they announced, and a full comparison (``resynchronize()``) after the notification
/// connection reconnects and on a slow timer, so a lost notification delays but never loses
/// a change.
extension ServerControl {
    /// Reacts to events announced by another instance.
    package func apply(remote events: [ClusterEvent]) async {
        var needsResync = false
        for event in Set(events) {
            switch event {
            case .newVersion(let partition):
                await hub.publish(partition)
                await service.readyFiles?.committed(partition, changes: nil)
            case .restored(let partition):
                await headTracker.forget(partition)
                await service.readyFiles?.historyRewritten(partition)
                do {
                    if let head = try await storage.history.head(of: partition) { service.headsAtStart.restored(partition, to: head.latest.version) }
                } catch {
                    logger.error("cannot read a restored partition's head", metadata: ["partition": "\(partition)", "error": "\(error)"])
                }
                let notified = await fence.rebind(
                    where: { $0.partition == partition }, because: "partition \(partition) was restored to an earlier snapshot")
                logger.notice("partition restored on another instance", metadata: ["partition": "\(partition)", "sessions_notified": "\(notified)"])
            case .flagsChanged, .schemaChanged, .grantsChanged:
                needsResync = true
            case .deviceChanged(let name), .deviceRevoked(let name):
                await service.deviceChanged(named: name)
            case .actionsQueued(let deviceID):
                await service.deliverPendingActions(toDeviceIDs: deviceID.map { [$0] })
            }
        }
        if needsResync {
            do {
                try await resynchronizePolicy()
            } catch {
                logger.error("cannot re-read flags, schemas and grants", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Re-reads flags, schemas, grants and the heads of partitions with sessions here, and
    /// applies whatever differs from what this instance holds. `devices`: also drop every
    /// cached device credential and re-check the sessions of every device bound here — after a
    /// (re)connect of the notification connection, when a device's change may have been
    /// missed; not on the periodic resync, where it would re-read every bound device's record
    /// every few seconds (20,000 devices an instance: 4,000 reads a second) for changes the
    /// notifications of a live connection already carry.
    package func resynchronize(devices: Bool = true) async throws {
        try await resynchronizePolicy()
        if devices { await service.recheckDevices() }
        summary.replace(with: try await storage.housekeeping.latestVersions())
        for partition in await hub.sessionCounts().keys {
            guard let head = try await storage.history.head(of: partition) else { continue }
            guard let known = await headTracker.replace(partition, with: head.latest) else {
                await hub.publish(partition)
                continue
            }
            if known == head.latest { continue }
            // The version this instance last saw is gone or has another salt: history was rewritten.
            if try await storage.history.salt(of: partition, version: known.version) != known.salt, known.version > head.base.version {
                _ = await fence.rebind(
                    where: { $0.partition == partition }, because: "partition \(partition) was restored to an earlier snapshot")
            } else {
                await hub.publish(partition)
            }
        }
    }

    func resynchronizePolicy() async throws {
        let snapshot = await policy.snapshot
        let flags = try await storage.policy.flags()
        if flags != snapshot.flags {
            _ = await policy.setFlags(flags)
            if flags.syncTerminated && !snapshot.flags.syncTerminated {
                let notified = await fence.rebind(where: { _ in true }, because: "sync was terminated on the server")
                logger.notice("sync terminated on another instance", metadata: ["sessions_notified": "\(notified)"])
            }
        }
        let schemas = try await storage.policy.schemaHistory()
        let newer = schemas.filter { $0.version > snapshot.schemas.current.version }
        if !newer.isEmpty {
            for record in newer { _ = await policy.appendSchema(record) }
            let version = newer.last!.version
            _ = await fence.rebind(where: { _ in true }, because: "the server's schema changed to version \(version)")
        }
        let grants = try await storage.policy.runtimeGrants()
        if Set(grants) != Set(snapshot.runtimeGrants) {
            var updated = snapshot
            for grant in grants { updated = await policy.setRuntimeGrant(grant) }
            await recheckSessions(updated)
        }
    }
}

/// The newest version of each partition this instance has seen (to tell new versions from a
/// restore when re-reading heads).
actor HeadTracker {
    private var heads: [PartitionName: ServerVersion] = [:]

    /// Records `latest`; returns what was recorded before (nil the first time).
    func replace(_ partition: PartitionName, with latest: ServerVersion) -> ServerVersion? {
        defer { heads[partition] = latest }
        return heads[partition]
    }

    func forget(_ partition: PartitionName) { heads[partition] = nil }
}
