import TetherProtocol

/// The checks a bind goes through, as pure functions over facts the server gathered
/// (docs/protocol.md, "Bind"). In order: partition name (204), token (203), sync
/// terminated (201), grant (206), schema version (235), then the store's identity:
/// unknown client file (208), bound elsewhere (108), version ahead of the history or with
/// another salt (211), version older than the compacted history (222).
package enum BindRules {
    /// Who is binding what, once name, token, termination, grant and schema passed.
    package struct Authorized: Sendable, Hashable {
        package var partition: PartitionName
        /// The user's name, or the enrolled device's (its ledger user).
        package var user: String
        package var access: PartitionAccess
        package var subject: AccessSubject
    }

    /// ``authorize(_:subject:policy:flags:schemas:)`` for a token that is a `[[user]]`'s.
    package static func authorize(
        _ request: BindRequest, users: UserDirectory, policy: AccessPolicy, flags: ServerFlags, schemas: SchemaRegistry
    ) -> Result<Authorized, SyncError> {
        authorize(request, subject: users.authenticate(request.token).map(AccessSubject.user), policy: policy, flags: flags, schemas: schemas)
    }

    /// `subject`: whom the bind's token names (a `[[user]]`, or the device of a device
    /// credential), nil when it names no one.
    package static func authorize(
        _ request: BindRequest, subject: AccessSubject?, policy: AccessPolicy, flags: ServerFlags, schemas: SchemaRegistry
    ) -> Result<Authorized, SyncError> {
        guard let partition = PartitionName(request.partition) else {
            return .failure(SyncError(
                .illegalPartitionName,
                "\(String(request.partition.prefix(140)).debugDescription) is not a legal partition name (^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$)"))
        }
        guard let subject else {
            return .failure(SyncError(.badUserAuthentication, "the access token for partition \(partition) was not accepted"))
        }
        if flags.syncTerminated { return .failure(syncTerminated) }
        guard let access = policy.access(subject, partition: partition) else {
            return .failure(SyncError(.permissionDenied, "\(subject) has no grant for partition \(partition)"))
        }
        if let problem = schemas.problem(storeSchemaVersion: request.schemaVersion) {
            return .failure(problem)
        }
        return .success(Authorized(partition: partition, user: subject.name, access: access, subject: subject))
    }

    /// The refusal of every bind while sync is terminated (201 class, retried with backoff).
    package static var syncTerminated: SyncError {
        SyncError(
            .otherSessionError, "sync is terminated on the server; an operator must run `tether-server admin enable-sync`",
            hint: "sync was terminated on the server; binds are retried with backoff until it is enabled again",
            retryAfterMilliseconds: 5000)
    }

    /// Checks a known store's identity and position against the partition's history.
    /// `saltAtVersion` is the salt the server has for the store's last version (nil when
    /// that version is not in the retained history).
    package static func verify(
        _ request: BindRequest, clientFile: ClientFileRecord?, head: PartitionHead, saltAtVersion: Int64?
    ) -> SyncError? {
        guard let identity = request.identity else { return nil }
        guard let clientFile, clientFile.identity == identity else {
            return SyncError(
                .badClientFileIdentifier,
                "the server does not know this store's client file \(identity.id) (sync was terminated, or the partition restored to before the store existed)")
        }
        let version = request.lastServerVersion
        if version.version > head.latest.version {
            return SyncError(
                .divergingHistories,
                "the store synced up to version \(version.version) but the server's history ends at \(head.latest.version) (the partition was restored)")
        }
        if version.version < head.base.version {
            return SyncError(
                .clientFileExpired,
                "the store last synced at version \(version.version); history before version \(head.base.version) was compacted (history_horizon_days)")
        }
        guard saltAtVersion == version.salt else {
            return SyncError(
                .divergingHistories,
                "the store's version \(version.version) is not in the server's history (the partition was restored to an earlier point)")
        }
        return nil
    }

    /// Why a bound session may no longer sync as it bound (token withdrawn, grant revoked or
    /// changed), or nil. Run on every session after a grant or reload changes the policy, and
    /// on each bind once its session is registered.
    /// A device's session is not checked against the users: its credential is the device's,
    /// whose changes reach its sessions by ``revalidate(_:device:)``.
    package static func revalidate(_ session: BoundSession, against snapshot: PolicySnapshot) -> SyncError? {
        if !session.subject.isDevice, snapshot.users.authenticate(digest: session.tokenDigest) != session.user {
            return SyncError(.badUserAuthentication, "the access token of user \(session.user) is no longer accepted")
        }
        if let problem = recheckAccess(session, subject: session.subject, policy: snapshot.access) { return problem }
        // A reload that changes what the grants impose moves the rows at the next bind.
        if case .success(let imposed) = SyncService.imposedSubscriptions(for: session.subject, partition: session.partition, snapshot: snapshot),
            imposed == session.imposed
        {
            return nil
        }
        return rebind("the subscriptions the grants of \(session.subject) impose on partition \(session.partition) changed")
    }

    /// Why a device's bound session may no longer sync after its identity changed: revoked or
    /// removed (203, as a token no longer accepted), or its name or tags changed so that its
    /// grants may yield other partitions or access (bind again). `record` is the device now
    /// (nil: removed).
    package static func revalidate(_ session: BoundSession, device record: DeviceIdentityRecord?, policy: AccessPolicy) -> SyncError? {
        guard let record, record.revokedAt == nil else {
            return SyncError(
                .badUserAuthentication, "the credential of device \(session.user) is no longer accepted (the device was revoked or removed)")
        }
        let subject = AccessSubject.device(id: record.id, name: record.name, tags: record.tags)
        if subject != session.subject {
            return rebind("the name or tags of device \(session.user) changed")
        }
        return recheckAccess(session, subject: subject, policy: policy)
    }

    private static func recheckAccess(_ session: BoundSession, subject: AccessSubject, policy: AccessPolicy) -> SyncError? {
        guard let access = policy.access(subject, partition: session.partition) else {
            return SyncError(.permissionDenied, "\(subject) no longer has a grant for partition \(session.partition)")
        }
        if access != session.access {
            return rebind("access of \(subject) to partition \(session.partition) changed to \(access.rawValue)")
        }
        return nil
    }

    /// Ends a session whose grounds changed (grant, schema, restore, terminate-sync): the agent
    /// binds again at once.
    package static func rebind(_ reason: String) -> SyncError {
        SyncError(
            .otherSessionError, "\(reason); bind again",
            hint: "the server changed something this session depends on; the agent binds again at once",
            retryAfterMilliseconds: 0)
    }

    /// With client recovery disabled every reset becomes a reset without recovery.
    package static func applyRecoveryPolicy(_ error: SyncError, recoveryEnabled: Bool) -> SyncError {
        guard !recoveryEnabled, error.action == .clientReset else { return error }
        var adjusted = error
        adjusted.action = .clientResetNoRecovery
        adjusted.hint = "client recovery is disabled on the server: the store is reset to the server's state and unsynced changes are kept only in the backup"
        return adjusted
    }
}
