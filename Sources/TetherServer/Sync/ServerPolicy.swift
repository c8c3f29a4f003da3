import TetherProtocol

/// Everything a bind decision reads, as one consistent value.
package struct PolicySnapshot: Sendable {
    package var users: UserDirectory
    /// The admin API's token (`admin_token_file`).
    package var adminToken: TokenDigest
    package var configuredGrants: [ServerConfiguration.Grant]
    package var runtimeGrants: [RuntimeGrant]
    package var access: AccessPolicy
    package var flags: ServerFlags
    /// `client_recovery` from the config file.
    package var configuredRecovery: Bool
    package var schemas: SchemaRegistry
    /// `[history] devices_ahead`: heal or roll back a window lost by a restore the server was
    /// not told of, and the default of `admin restore`.
    package var devicesAhead: RestoreMode = .heal

    package init(
        users: UserDirectory, adminToken: TokenDigest, configuredGrants: [ServerConfiguration.Grant], runtimeGrants: [RuntimeGrant],
        access: AccessPolicy, flags: ServerFlags, configuredRecovery: Bool, schemas: SchemaRegistry
    ) {
        self.users = users
        self.adminToken = adminToken
        self.configuredGrants = configuredGrants
        self.runtimeGrants = runtimeGrants
        self.access = access
        self.flags = flags
        self.configuredRecovery = configuredRecovery
        self.schemas = schemas
    }

    /// Whether resets may recover unsynced changes: `admin recovery on|off` wins until the
    /// config file's `client_recovery` itself changes.
    package var recoveryEnabled: Bool {
        if let override = flags.recoveryOverride, flags.recoveryOverrideConfigValue == configuredRecovery { return override }
        return configuredRecovery
    }
}

/// The server's changeable rules: users and tokens, grants, flags and schemas. Changed by
/// reloads (SIGHUP) and admin commands; read as a ``PolicySnapshot`` by every bind.
package actor ServerPolicy {
    package private(set) var snapshot: PolicySnapshot
    /// The admin token for the connection guard, kept equal to `snapshot.adminToken`.
    package nonisolated let adminGate: AdminTokenGate
    /// The web console's sessions: signed in with the admin token, ended when it changes.
    package nonisolated let consoleSessions = ConsoleSessions()

    package init(
        users: UserDirectory, adminToken: TokenDigest, configuredGrants: [ServerConfiguration.Grant], runtimeGrants: [RuntimeGrant],
        flags: ServerFlags, configuredRecovery: Bool, schemas: SchemaRegistry, devicesAhead: RestoreMode = .heal
    ) {
        adminGate = AdminTokenGate(adminToken)
        snapshot = PolicySnapshot(
            users: users, adminToken: adminToken, configuredGrants: configuredGrants, runtimeGrants: runtimeGrants,
            access: AccessPolicy(configured: configuredGrants, runtime: runtimeGrants),
            flags: flags, configuredRecovery: configuredRecovery, schemas: schemas)
        snapshot.devicesAhead = devicesAhead
    }

    package func reload(
        users: UserDirectory, adminToken: TokenDigest, configuredGrants: [ServerConfiguration.Grant], configuredRecovery: Bool,
        devicesAhead: RestoreMode = .heal
    ) -> PolicySnapshot {
        snapshot.devicesAhead = devicesAhead
        snapshot.users = users
        if snapshot.adminToken != adminToken { consoleSessions.closeAll() }
        snapshot.adminToken = adminToken
        adminGate.replace(adminToken)
        snapshot.configuredGrants = configuredGrants
        snapshot.configuredRecovery = configuredRecovery
        snapshot.access = AccessPolicy(configured: configuredGrants, runtime: snapshot.runtimeGrants)
        return snapshot
    }

    package func setRuntimeGrant(_ grant: RuntimeGrant) -> PolicySnapshot {
        snapshot.runtimeGrants.removeAll { $0.user == grant.user && $0.pattern == grant.pattern }
        snapshot.runtimeGrants.append(grant)
        snapshot.access = AccessPolicy(configured: snapshot.configuredGrants, runtime: snapshot.runtimeGrants)
        return snapshot
    }

    package func setFlags(_ flags: ServerFlags) -> PolicySnapshot {
        snapshot.flags = flags
        return snapshot
    }

    package func appendSchema(_ record: SchemaRecord) -> PolicySnapshot {
        snapshot.schemas.append(record)
        return snapshot
    }
}
