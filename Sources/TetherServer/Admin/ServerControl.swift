import Foundation
import Logging
import Synchronization
import HTTPTypes
import TetherProtocol
import TetherTOML

/// The operations of the admin API and of a reload, over the storage, the policy and the
/// live sessions. Every change that affects bound sessions pushes them an error promptly:
/// 206 when access was revoked, 203 when their token is no longer accepted, and 201
/// (retry: bind again) when the partition was restored, the schema changed, sync was
/// terminated, or their access changed.
package final class ServerControl: Sendable {
    let service: SyncService
    /// Tells sessions to bind again (``RebindFence``): the sync service's own.
    var fence: RebindFence { service.fence }
    let configuration: ServerConfiguration
    let now: @Sendable () -> Date
    let logger: Logger
    /// Heads this instance has seen, for ``resynchronize()`` (instances sharing a database).
    let headTracker = HeadTracker()
    /// The counts above the ledger's large lists, kept a few seconds (``DeviceLedgerCountCache``).
    let ledgerCounts = Mutex(DeviceLedgerCountCache())

    package init(
        service: SyncService, configuration: ServerConfiguration, now: @escaping @Sendable () -> Date, logger: Logger
    ) {
        self.service = service
        self.configuration = configuration
        self.now = now
        self.logger = logger
    }

    /// The sync service's storage by role: admin, heal, housekeeping, policy, ledger, and the
    /// history's heads.
    var storage: StorageRoles { service.storage }
    var policy: ServerPolicy { service.policy }
    var hub: SyncHub { service.hub }
    var bus: (any ClusterBus)? { service.bus }
    var summary: PartitionSummary { service.summary }
    /// `history_horizon_days` in seconds.
    var historyHorizon: TimeInterval { Double(configuration.historyHorizonDays) * 86400 }

    package func status() async throws -> AdminAPI.Status {
        let snapshot = await policy.snapshot
        let sessions = await hub.sessionCounts()
        let heals = Dictionary(try await storage.heal.heals().map { ($0.partition, $0) }, uniquingKeysWith: { a, _ in a })
        let partitions = try await storage.admin.partitions().map { p in
            AdminAPI.Status.Partition(
                name: p.name, serverVersion: p.head.latest.version, compactedThrough: p.head.base.version,
                historyEntries: p.historyEntries, historyBytes: p.historyBytes, rows: p.rows, clientFiles: p.clientFiles,
                connectedClients: PartitionName(p.name).flatMap { sessions[$0] } ?? 0, heal: heals[p.name])
        }
        return AdminAPI.Status(
            server: .init(
                release: TetherVersion.release, syncProtocol: TetherVersion.syncProtocol,
                syncTerminated: snapshot.flags.syncTerminated, clientRecovery: snapshot.recoveryEnabled,
                schemaVersion: snapshot.schemas.current.version, connections: await hub.connectionCount,
                sessions: sessions.values.reduce(0, +)),
            partitions: partitions)
    }

    package func snapshot(_ name: String) async throws -> AdminAPI.Snapshot {
        let partition = try knownPartition(name)
        guard try await storage.history.head(of: partition) != nil else { throw AdminError.unknownPartition(name) }
        let record = try await storage.admin.snapshot(of: partition, now: now())
        logger.info("snapshot taken", metadata: ["partition": "\(partition)", "snapshot": "\(record.id)", "version": "\(record.version)"])
        return AdminAPI.Snapshot(partition: partition.rawValue, snapshot: record.id, serverVersion: record.version)
    }

    /// Restores the partition to `snapshot`. `mode` (default: `[history] devices_ahead`)
    /// says what becomes of the window it drops: healed from the devices, or rolled back.
    package func restore(_ name: String, to snapshot: String, mode asked: RestoreMode? = nil) async throws -> AdminAPI.Restored {
        let partition = try knownPartition(name)
        let mode: RestoreMode
        if let asked { mode = asked } else { mode = await policy.snapshot.devicesAhead }
        let head: PartitionHead, heal: HealRecord?
        do {
            (head, heal) = try await storage.admin.restore(partition, to: snapshot, mode: mode, now: now())
        } catch StorageError.notFound(let what) {
            throw AdminError(.notFound, "\(what)", hint: "`tether-server admin snapshot \(name)` prints the ids of new snapshots")
        }
        summary.restored(partition.rawValue, version: head.latest.version)
        service.headsAtStart.restored(partition, to: head.latest.version)
        await service.readyFiles?.historyRewritten(partition)
        var metadata: Logger.Metadata = [
            "partition": "\(partition)", "snapshot": "\(snapshot)", "version": "\(head.latest.version)", "mode": "\(mode.rawValue)",
        ]
        if let heal {
            metadata["lost_window"] = "\(heal.restoredTo + 1)...\(heal.lostUntil)"
            metadata["mode"] = "\(heal.mode.rawValue)"
        }
        logger.notice("partition restored", metadata: metadata)
        await bus?.announce(.restored(partition))
        let notified = await fence.rebind(
            where: { $0.partition == partition }, because: "partition \(partition) was restored to snapshot \(snapshot)")
        return AdminAPI.Restored(
            partition: partition.rawValue, snapshot: snapshot, serverVersion: head.latest.version, sessionsNotified: notified,
            mode: heal?.mode ?? mode, heal: heal)
    }

    /// Closes the partition's heal: devices that bind later reset as after a rollback.
    package func healDone(_ name: String) async throws -> HealRecord {
        let partition = try knownPartition(name)
        let record: HealRecord
        do {
            record = try await storage.heal.closeHeal(partition, now: now())
        } catch StorageError.notFound {
            throw AdminError(
                .notFound, "partition \(partition) has no open heal",
                hint: "`tether-server admin status` shows each partition's lost window and whether it is still healing")
        }
        logger.notice(
            "heal closed", metadata: [
                "partition": "\(partition)", "lost_window": "\(record.restoredTo + 1)...\(record.lostUntil)",
                "healed_to": "\(record.healedTo)", "devices": "\(record.devices)", "healed_changes": "\(record.healedChanges)",
            ])
        return record
    }

    package func terminateSync() async throws -> AdminAPI.SyncState {
        let forgotten = try await storage.admin.terminateSync()
        var flags = await policy.snapshot.flags
        flags.syncTerminated = true
        _ = await policy.setFlags(flags)
        logger.notice("sync terminated", metadata: ["client_files_forgotten": "\(forgotten)"])
        await bus?.announce(.flagsChanged)
        let notified = await fence.rebind(where: { _ in true }, because: "sync was terminated on the server")
        return AdminAPI.SyncState(syncTerminated: true, clientFilesForgotten: forgotten, sessionsNotified: notified)
    }

    package func enableSync() async throws -> AdminAPI.SyncState {
        var flags = await policy.snapshot.flags
        flags.syncTerminated = false
        try await storage.policy.setFlags(flags)
        _ = await policy.setFlags(flags)
        logger.notice("sync enabled")
        await bus?.announce(.flagsChanged)
        return AdminAPI.SyncState(syncTerminated: false, clientFilesForgotten: 0, sessionsNotified: 0)
    }

    package func setRecovery(_ enabled: Bool) async throws -> AdminAPI.Recovery {
        let snapshot = await policy.snapshot
        var flags = snapshot.flags
        flags.recoveryOverride = enabled
        flags.recoveryOverrideConfigValue = snapshot.configuredRecovery
        try await storage.policy.setFlags(flags)
        _ = await policy.setFlags(flags)
        logger.notice("client recovery \(enabled ? "enabled" : "disabled")")
        await bus?.announce(.flagsChanged)
        return AdminAPI.Recovery(enabled: enabled)
    }

    package func applySchema(_ request: AdminAPI.SchemaApplyRequest) async throws -> AdminAPI.SchemaApplied {
        let schema: Schema
        do {
            schema = try Schema.parse(toml: request.schemaToml, file: request.file)
        } catch {
            throw AdminError(.badRequest, error.description, hint: error.hint)
        }
        let current = await policy.snapshot.schemas
        let plan = current.plan(schema)
        var result = AdminAPI.SchemaApplied(
            applied: false, breaking: plan.isBreaking, version: schema.version, previousVersion: current.current.version,
            differences: plan.diff.summary, sessionsNotified: 0)
        if let refusal = plan.refusal { throw AdminError(.badRequest, refusal) }
        if plan.isBreaking && !request.allowBreaking {
            var error = AdminError(
                .conflict, "schema version \(schema.version) is a breaking change; every store made with an older version must reset",
                hint: "add --allow-breaking to apply it")
            error.body = try JSONEncoder().encode(result)
            throw error
        }
        let record = SchemaRecord(schema: schema, isBreaking: plan.isBreaking, appliedAt: now())
        try await storage.policy.appendSchema(record, migration: plan.isBreaking ? StateMigration(from: current.current, to: schema) : nil)
        _ = await policy.appendSchema(record)
        if plan.isBreaking { summary.replace(with: try await storage.housekeeping.latestVersions()) }
        logger.notice("schema applied", metadata: [
            "version": "\(schema.version)", "breaking": "\(plan.isBreaking)", "differences": "\(plan.diff.summary.count)",
        ])
        result.applied = true
        await bus?.announce(.schemaChanged)
        result.sessionsNotified = await fence.rebind(
            where: { _ in true }, because: "the server's schema changed to version \(schema.version)")
        return result
    }

    /// Grants (or, `access` nil, revokes) `pattern` to `user`: a subject (``GrantSubject``) —
    /// a `[[user]]` or enrolled device by name, `tag:K=V`, or `device:*`.
    package func grant(user: String, pattern text: String, access: PartitionAccess?) async throws -> AdminAPI.GrantChanged {
        let snapshot = await policy.snapshot
        let subject: GrantSubject
        do throws(GrantSubjectProblem) {
            subject = try GrantSubject.parse(user)
        } catch {
            throw AdminError(.badRequest, error.description, hint: error.hint)
        }
        if case .user(let name) = subject, !snapshot.users.contains(user: name), !(try await isEnrolledName(name)) {
            throw AdminError(
                .notFound, "no [[user]] or enrolled device is named \(name.debugDescription)",
                hint: "users are defined in the server's config file; `tether-server admin devices` lists the identities")
        }
        let pattern: GrantPattern
        switch GrantPattern.parse(text) {
        case .success(let value): pattern = value
        case .failure(let error): throw AdminError(.badRequest, error.description)
        }
        if access == nil, snapshot.access.grants[AccessPolicy.Key(user: user, pattern: pattern)] == nil {
            throw AdminError(.notFound, "user \(user) has no grant \(text.debugDescription)", hint: "`revoke` takes the exact pattern of a grant")
        }
        let change = RuntimeGrant(user: user, pattern: pattern, access: access)
        try await storage.policy.setRuntimeGrant(change)
        let updated = await policy.setRuntimeGrant(change)
        logger.notice(access == nil ? "grant revoked" : "grant added", metadata: [
            "user": "\(user)", "pattern": "\(pattern)", "access": "\(access?.rawValue ?? "none")",
        ])
        await bus?.announce(.grantsChanged)
        let notified = await recheckSessions(updated)
        return AdminAPI.GrantChanged(user: user, pattern: text, access: access?.rawValue, sessionsNotified: notified)
    }

    /// Removes client files not seen for `history_horizon_days` (the identities of devices away
    /// that long, and of binds whose device never came back); those of open sessions are
    /// marked seen first, so a session that stays bound never loses its identity.
    @discardableResult
    package func expireClientFiles() async throws -> Int {
        let bound = await hub.bound().map(\.clientFile)
        let at = now()
        let removed = try await storage.housekeeping.expireClientFiles(lastSeenBefore: at.addingTimeInterval(-historyHorizon), bound: bound, now: at)
        if removed > 0 {
            logger.notice("client files expired: not seen for \(configuration.historyHorizonDays) days (history_horizon_days)", metadata: [
                "client_files": "\(removed)",
            ])
        }
        // The device ledger expires with them, and keeps to its bound.
        let devices = try await storage.ledger.expireDevices(
            reportedBefore: at.addingTimeInterval(-historyHorizon), maxEntries: configuration.devices.maxEntries)
        if devices > 0 {
            logger.notice("device ledger entries expired (history_horizon_days, [devices] max_entries)", metadata: [
                "entries": "\(devices)",
            ])
        }
        let samples = try await storage.ledger.expireDeviceHistory(before: at - TimeInterval(DeviceHistory.retentionSeconds))
        if samples > 0 {
            logger.info("device report history expired (7 days)", metadata: ["samples": "\(samples)"])
        }
        return removed
    }

    package func compact(horizonSeconds: Int?) async throws -> AdminAPI.Compacted {
        let horizon = horizonSeconds.map(Double.init) ?? historyHorizon
        let report = try await storage.housekeeping.compact(olderThan: now().addingTimeInterval(-horizon))
        logger.info("history compacted", metadata: ["removed_entries": "\(report.removedEntries)"])
        return AdminAPI.Compacted(removedEntries: report.partitions)
    }

    /// Re-checks every bound session against the current users and grants.
    @discardableResult
    package func recheckSessions(_ snapshot: PolicySnapshot) async -> Int {
        var failures: [(BoundSession, SyncError)] = []
        for session in await hub.bound() {
            if let error = BindRules.revalidate(session, against: snapshot) { failures.append((session, error)) }
        }
        await fence.push(failures)
        return failures.count
    }

    private func knownPartition(_ name: String) throws -> PartitionName {
        let name = name.removingPercentEncoding ?? name
        guard let partition = PartitionName(name) else { throw AdminError.illegalPartition(name) }
        return partition
    }
}
