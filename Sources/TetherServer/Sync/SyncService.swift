import Foundation
import Synchronization
import Logging
import TetherProtocol

/// The server half of docs/sync-model.md: decides binds and integrates uploads, using the
/// storage, the live-session hub and the current policy. Connections call it; it holds no
/// per-connection state.
package final class SyncService: Sendable {
    /// The storage by role: a bind and an upload use ``StorageRoles/history``,
    /// ``StorageRoles/integration`` and ``StorageRoles/policy``; heal chunks and devices ahead
    /// ``StorageRoles/heal``; device reports ``StorageRoles/ledger``.
    package let storage: StorageRoles
    package let hub: SyncHub
    /// Turns a storage's fence into the rebind the session gets (``RebindFence``).
    package let fence: RebindFence
    package let policy: ServerPolicy
    /// Tells other instances sharing the storage about new versions (nil: one instance).
    package let bus: (any ClusterBus)?
    let now: @Sendable () -> Date
    let logger: Logger
    /// What `/metrics` exposes (docs/server.md).
    package let metrics: ServerMetrics
    /// Every partition's latest version, kept current here (``PartitionSummary``).
    package let summary = PartitionSummary()
    /// `[limits] glob_partitions_per_user`.
    let globPartitionsPerUser: Int
    /// Where each partition's history ended when the process started (``HealDetection``).
    package let headsAtStart = HeadsAtStart()
    /// This instance's ready files (nil: states go as rows).
    package let readyFiles: ReadyFileCache?
    /// `[devices]`: the ledger's ages for the metrics.
    package let devices: DeviceLedgerSettings
    /// `[subscriptions] max_unindexed_rows`: the rows a filter no index serves may be evaluated on.
    let maxUnindexedRows: Int
    /// The ledger's last counts (``DeviceCountsService``), for `/metrics`; nil before the first.
    let ledgerCounts = Mutex<DeviceCounts?>(nil)
    /// Enrolled devices' credentials, cached (``StorageRoles/identity``).
    package let deviceCredentials: DeviceCredentials

    package init(
        storage: StorageRoles, hub: SyncHub, policy: ServerPolicy, bus: (any ClusterBus)? = nil,
        now: @escaping @Sendable () -> Date, logger: Logger, metrics: ServerMetrics = ServerMetrics(),
        globPartitionsPerUser: Int = ConnectionLimits().globPartitionsPerUser, readyFiles: ReadyFileCache? = nil,
        devices: DeviceLedgerSettings = DeviceLedgerSettings(), maxUnindexedRows: Int = SubscriptionSettings.defaultMaxUnindexedRows
    ) {
        self.maxUnindexedRows = maxUnindexedRows
        self.readyFiles = readyFiles
        self.devices = devices
        self.globPartitionsPerUser = globPartitionsPerUser
        self.fence = RebindFence(hub: hub)
        self.storage = storage
        self.bus = bus
        self.hub = hub
        self.policy = policy
        self.now = now
        self.logger = logger
        self.metrics = metrics
        // A rotation completed here (acknowledged, or a bind with the new credential) is
        // announced, so that other instances drop the old credential from their caches.
        self.deviceCredentials = DeviceCredentials(storage: storage.identity, now: now) { [bus, logger] record in
            logger.notice("device credential rotated", metadata: ["device": "\(record.name)", "device_id": "\(record.id)"])
            await bus?.announce(.deviceChanged(record.name))
        }
    }

    package enum BindOutcome: Sendable {
        /// `file`: the ready file its state comes as (nil: rows, or no state).
        case accepted(BindReply, downloadAfter: ServerVersion, session: BoundSession, wakeups: DownloadWakeup, file: ReadyFileHandle?)
        case rejected(SyncError)

        /// Whether the bind's token named a user (accepted, or refused for another reason):
        /// the connection is authenticated from then on (``ConnectionGuard``).
        package var tokenAccepted: Bool {
            switch self {
            case .accepted: true
            case .rejected(let error): error.code != .illegalPartitionName && error.code != .badUserAuthentication
            }
        }
    }

    /// Runs every bind check (``BindRules``), reserves the client file and registers the session.
    package func bind(_ request: BindRequest, key: SessionKey, fail: @escaping @Sendable (SyncError) async -> Void) async -> BindOutcome {
        let snapshot = await policy.snapshot
        let outcome = await decide(request, key: key, snapshot: snapshot, fail: fail)
        if case .rejected(let error) = outcome {
            return .rejected(BindRules.applyRecoveryPolicy(error, recoveryEnabled: snapshot.recoveryEnabled))
        }
        return outcome
    }

    private func decide(
        _ request: BindRequest, key: SessionKey, snapshot: PolicySnapshot, fail: @escaping @Sendable (SyncError) async -> Void
    ) async -> BindOutcome {
        let subject: AccessSubject?
        do {
            subject = try await self.subject(of: request.token, users: snapshot.users)
        } catch {
            logger.error("bind failed in storage", metadata: ["partition": "\(request.partition.prefix(140))", "error": "\(error)"])
            return .rejected(Self.storageFailure(error))
        }
        let authorized: BindRules.Authorized
        switch BindRules.authorize(request, subject: subject, policy: snapshot.access, flags: snapshot.flags, schemas: snapshot.schemas) {
        case .success(let value): authorized = value
        case .failure(let error): return .rejected(error)
        }
        let partition = authorized.partition
        do {
            // Subscriptions first: a set that cannot be served is refused before anything is
            // registered or reserved.
            let imposed: SubscriptionSet?
            switch Self.imposedSubscriptions(for: authorized.subject, partition: partition, snapshot: snapshot) {
            case .success(let value): imposed = value
            case .failure(let error): return .rejected(error)
            }
            // An agent without subscriptions (no subscriptions in its bind) could only hold the
            // whole partition, which the grant does not allow.
            if let imposed, request.subscriptions == nil { return .rejected(Self.imposedOnOldAgent(imposed)) }
            let scopes: BindScopes
            switch try await bindScopes(
                request.subscriptions ?? .whole, imposed: imposed, subject: authorized.subject, schema: snapshot.schemas.current,
                clientFile: request.identity?.id)
            {
            case .success(let value): scopes = value
            case .failure(let error): return .rejected(error)
            }
            if let refusal = try await unindexedRefusal(scopes.wanted, partition: partition) { return .rejected(refusal) }
            // Read first (for a new device, with its registration): a restore or terminate-sync
            // after this point fences the session's uploads and downloads.
            let epoch: Int64
            let identity: ClientFileIdentity
            let head: PartitionHead
            let downloadAfter: ServerVersion
            var integratedSeq: Int64 = 0
            if let known = request.identity {
                epoch = try await storage.history.epoch(of: partition)
                let record = try await storage.integration.clientFile(known.id, of: partition)
                let currentHead = try await storage.history.head(of: partition) ?? .empty
                if let record, record.identity == known {
                    // A store whose history disagrees with the server's is a copy of the one
                    // bound now (or an older image of it): it hears so rather than 108 forever.
                    let boundElsewhere = BindRules.verifyLineage(request, clientFile: record) ?? SyncError(
                        .clientFileBoundInOtherSession, "client file \(known.id) of partition \(partition) is already bound in another session")
                    guard await hub.reserve(known.id, of: partition, for: key) else { return .rejected(boundElsewhere) }
                    // Sessions of other instances sharing the storage count too.
                    if let bus, try await !bus.acquire(clientFile: known.id) {
                        await hub.release(key)
                        return .rejected(boundElsewhere)
                    }
                }
                let salt = try await storage.history.salt(of: partition, version: request.lastServerVersion.version)
                if let problem = ServerFaultInjection.refusal(request)
                    ?? BindRules.verify(request, clientFile: record, head: currentHead, saltAtVersion: salt)
                    ?? record.flatMap({ BindRules.verifyLineage(request, clientFile: $0) })
                {
                    await release(key)
                    if problem.code == .divergingHistories || problem.code == .badClientFileIdentifier {
                        await noteStoreAhead(
                            reported: request.lastServerVersion, saltInHistory: salt, in: partition, head: currentHead, clientFile: record,
                            clientFileID: known.id)
                    }
                    return .rejected(problem)
                }
                // Checked with the client file reserved: no other session of it integrates
                // between the check and this one's uploads.
                try await storage.integration.touchClientFile(
                    known.id, of: partition, now: now(), confirmedVersion: request.lastServerVersion.version)
                integratedSeq = record?.integratedSeq ?? 0
                (identity, head, downloadAfter) = (known, currentHead, request.lastServerVersion)
            } else {
                if let refusal = globCapRefusal(authorized, snapshot: snapshot) { return .rejected(refusal) }
                (identity, head, epoch) = try await storage.integration.registerClientFileWithEpoch(in: partition, now: now())
                summary.created(partition.rawValue, version: head.latest.version)
                _ = await hub.reserve(identity.id, of: partition, for: key)
                _ = try await bus?.acquire(clientFile: identity.id)
                downloadAfter = head.latest
            }
            // Ready files hold whole partitions: a store with subscriptions (its own or imposed)
            // takes rows.
            let file = request.identity == nil && scopes.wanted.isWhole
                ? await readyFile(for: request, partition: partition, head: head, schemaVersion: snapshot.schemas.current.version) : nil
            // Recorded before the store can hold it: a bind cut short after this finds the
            // values the rows were chosen with.
            if let applied = scopes.applied {
                try await storage.integration.recordAppliedScope(applied, initial: scopes.initial, of: identity.id)
            }
            let reply = BindReply(
                session: request.session, identity: identity, isNewIdentity: request.identity == nil,
                stateFollows: request.identity == nil, access: authorized.access, latestServerVersion: head.latest,
                integratedClientSeq: integratedSeq, schema: snapshot.schemas.current, fileFollows: file != nil)
            var session = BoundSession(
                key: key, partition: partition, clientFile: identity.id, user: authorized.user,
                tokenDigest: TokenDigest(token: request.token), access: authorized.access, epoch: epoch,
                uploadSalt: request.lineage?.uploadSalt ?? 0, subject: authorized.subject, fail: fail)
            session.scope = scopes.wanted
            session.imposed = imposed
            if authorized.access == .readwrite {
                session.writeRules = writeRules(
                    for: authorized.subject, partition: partition, snapshot: snapshot, now: now().timeIntervalSince1970)
            }
            session.subscriptionChange = scopes.change
            let wakeups = await hub.register(session)
            // A revoke (or a token withdrawn by a reload) while this bind awaited the storage
            // re-checked the sessions registered then, which did not include this one: check
            // it again now that it is registered. A change after this read finds it registered.
            if let lost = BindRules.revalidate(session, against: await policy.snapshot) {
                await release(key)
                return .rejected(lost)
            }
            // The same for a device revoked or retagged meanwhile (``deviceChanged(_:)``).
            if let deviceID = authorized.subject.deviceID,
                let lost = BindRules.revalidate(
                    session, device: try await deviceCredentials.record(deviceID), policy: await policy.snapshot.access)
            {
                await release(key)
                return .rejected(lost)
            }
            // With other instances, this instance's flags may lag a terminate-sync another one
            // committed: read them again now the session is registered. One committed before
            // this read is refused here; one committed after it fences the session's uploads
            // and downloads by the epoch and reaches the session by its notification (or the
            // resync), which finds it registered.
            if bus != nil, try await storage.policy.flags().syncTerminated {
                await release(key)
                return .rejected(BindRules.syncTerminated)
            }
            if request.identity == nil { metrics.stateDownload(file: file != nil) }
            return .accepted(reply, downloadAfter: downloadAfter, session: session, wakeups: wakeups, file: file)
        } catch {
            await release(key)
            logger.error("bind failed in storage", metadata: ["partition": "\(partition)", "error": "\(error)"])
            return .rejected(Self.storageFailure(error))
        }
    }

    /// Ends a session: frees its client file here and, with other instances, its lease.
    package func release(_ key: SessionKey) async {
        let freed = await hub.release(key)
        if let bus, !freed.isEmpty { await bus.release(clientFiles: freed) }
    }

    /// Validates and commits an upload; nil when committed (the download stream acknowledges it).
    package func integrate(_ upload: Upload, for session: BoundSession) async -> SyncError? {
        let snapshot = await policy.snapshot
        guard session.access.canWrite else {
            return SyncError(.permissionDenied, "partition \(session.partition) is read-only for user \(session.user)")
        }
        for changeset in upload.changesets {
            if let problem = snapshot.schemas.problem(upload: changeset.changes) {
                return BindRules.applyRecoveryPolicy(problem, recoveryEnabled: snapshot.recoveryEnabled)
            }
        }
        do {
            let started = ContinuousClock.now
            let outcome = try await storage.integration.integrate(
                upload.changesets, from: session.clientFile, uploadSalt: session.uploadSalt, into: session.partition, now: now(),
                epoch: session.epoch, scope: session.writeScope)
            metrics.integrated(changes: outcome.accepted, duration: ContinuousClock.now - started)
            await committed(
                session.partition, head: outcome.head.latest.version, wroteHistory: outcome.accepted > 0,
                changes: upload.changesets.reduce(0) { $0 + Int64($1.changes.count) })
            if let gap = outcome.gap {
                return SyncError(
                    .otherSessionError,
                    "upload batch after seq \(gap.afterSeq) does not follow seq \(gap.integratedSeq), the last one the server integrated for this store; bind again and upload after it",
                    hint: "an earlier upload was lost in transit; the agent binds again and resumes from the seq the server reports",
                    retryAfterMilliseconds: 0)
            }
            if outcome.compensatingWrites > 0 {
                logger.info("upload had compensating writes", metadata: [
                    "partition": "\(session.partition)", "user": "\(session.user)", "compensating_writes": "\(outcome.compensatingWrites)",
                ])
            }
            logger.debug("upload integrated", metadata: [
                "partition": "\(session.partition)", "accepted": "\(outcome.accepted)", "ignored": "\(outcome.ignored)",
                "version": "\(outcome.head.latest.version)",
            ])
            return nil
        } catch {
            return sessionError(error, of: session, in: "upload", recoveryEnabled: snapshot.recoveryEnabled)
        }
    }

    /// After a commit of `session`'s: the partition's version for `/metrics` and, when the
    /// commit wrote history, wakes the partition's sessions here, tells other instances and
    /// the ready files (`changes`: at most that many rows were added).
    func committed(_ partition: PartitionName, head: Int64, wroteHistory: Bool, changes: Int64) async {
        summary.committed(partition.rawValue, version: head)
        if wroteHistory {
            await hub.publish(partition)
            await bus?.announce(.newVersion(partition))
            await readyFiles?.committed(partition, changes: changes)
        }
    }

    /// The session error for a storage failure while committing a session's `work` (an
    /// upload, a heal chunk): bind again when fenced, 208 when its client file is gone,
    /// else a retryable server error (logged here, once).
    func sessionError(_ error: any Error, of session: BoundSession, in work: String, recoveryEnabled: Bool) -> SyncError {
        switch error {
        case StorageError.fenced(let what):
            return fence.fenced(what)
        case StorageError.notFound(let what):
            let error = SyncError(.badClientFileIdentifier, "\(what): the store's identity was forgotten (sync terminated or partition restored)")
            return BindRules.applyRecoveryPolicy(error, recoveryEnabled: recoveryEnabled)
        default:
            logger.error("\(work) failed in storage", metadata: ["partition": "\(session.partition)", "error": "\(error)"])
            return Self.storageFailure(error)
        }
    }

    static func storageFailure(_ error: any Error) -> SyncError {
        SyncError(
            .otherSessionError, "the server could not access its storage; try again later",
            hint: "a server-side storage error; the server logs it, and the session is retried with backoff",
            retryAfterMilliseconds: 2000)
    }
}
